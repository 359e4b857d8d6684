/// The highest resident memory of the server processes (a cluster's nodes) over
/// repeated readings: of their sum, and of the largest single one.
struct PeakMemory {
    /// The highest sum read; nil until every process could be read once.
    private(set) var total: Int?
    /// The highest any one process reached.
    private(set) var largest: Int?

    mutating func read(_ servers: [ProcessProbe]) {
        let sizes = servers.compactMap { $0.residentBytes() }
        guard sizes.count == servers.count, let top = sizes.max() else { return }
        total = max(total ?? 0, sizes.reduce(0, +))
        largest = max(largest ?? 0, top)
    }
}
