/// A server-assigned connection number, shown as `c1`, `c2`, ... in order of arrival.
public struct ConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let value: Int

    public init(_ value: Int) { self.value = value }

    /// Parses `c12`.
    public init?(_ text: String) {
        guard text.first == "c", let value = Int(text.dropFirst()) else { return nil }
        self.value = value
    }

    public static func < (a: ConnectionID, b: ConnectionID) -> Bool { a.value < b.value }

    public var description: String { "c\(value)" }
}
