/// The machine-wide CPU counters of `/proc/stat` at one moment.
///
/// Two samples give the share of time the hypervisor took away from this guest
/// (steal): runs with too much of it are not comparable and are discarded.
public struct HostCPUSample: Sendable, Equatable {
    /// Jiffies per state, in `/proc/stat` order: user nice system idle iowait irq softirq steal.
    public var counters: [UInt64]

    public init(counters: [UInt64]) { self.counters = counters }

    /// Reads the aggregate `cpu` line now.
    public static func now() -> HostCPUSample? {
        guard let text = ProcessProbe.read("/proc/stat"), let line = text.split(separator: "\n").first else { return nil }
        return parse(String(line))
    }

    /// Parses a `cpu  …` line.
    public static func parse(_ line: String) -> HostCPUSample? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.first == "cpu", fields.count >= 9 else { return nil }
        let numbers = fields.dropFirst().prefix(8).compactMap { UInt64($0) }
        guard numbers.count == 8 else { return nil }
        return HostCPUSample(counters: numbers)
    }

    var total: UInt64 { counters.reduce(0, +) }
    var steal: UInt64 { counters[7] }
    var busy: UInt64 { total - counters[3] - counters[4] }

    /// Percent of all CPU time between `self` and `later` that was stolen.
    public func stealPercent(until later: HostCPUSample) -> Double {
        let total = later.total &- self.total
        guard total > 0, later.total >= self.total else { return 0 }
        return Double(later.steal &- steal) / Double(total) * 100
    }

    /// Percent of all CPU time between `self` and `later` that was busy (not idle or iowait).
    public func busyPercent(until later: HostCPUSample) -> Double {
        let total = later.total &- self.total
        guard total > 0, later.total >= self.total else { return 0 }
        return Double(later.busy &- busy) / Double(total) * 100
    }
}
