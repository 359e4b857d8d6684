/// Why a profile could not be used.
public struct ProfileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or profile name concerned.
    public var origin: String
    /// What is wrong.
    public var problems: [String]

    public var description: String { "\(origin): " + problems.joined(separator: "; ") }
}
