/// The features an SDK may implement, as a tree of slash-separated ids
/// (`background`, `background/services`, ...), from `Fixtures/spec/features.yaml`.
/// A manifest includes or excludes nodes; excluding a node excludes everything under it.
public struct FeatureTree: Sendable, Equatable {
    /// Feature id → one-line title.
    public private(set) var titles: [String: String] = [:]

    public init(titles: [String: String] = [:]) {
        self.titles = titles
    }

    /// Every id, sorted.
    public var ids: [String] { titles.keys.sorted() }

    public func contains(_ id: String) -> Bool { titles[id] != nil }

    /// `id` and the nodes above it, nearest first: `a/b/c`, `a/b`, `a`.
    public static func lineage(_ id: String) -> [String] {
        var parts = id.split(separator: "/").map(String.init)
        var found: [String] = []
        while !parts.isEmpty {
            found.append(parts.joined(separator: "/"))
            parts.removeLast()
        }
        return found
    }

    /// The parent of `id`, or nil at the top.
    public static func parent(of id: String) -> String? {
        let lineage = lineage(id)
        return lineage.count > 1 ? lineage[1] : nil
    }
}
