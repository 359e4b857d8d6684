/// Why a profile could not be used.
public struct ProfileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A position in a profile file (1-based).
    public struct Location: Sendable, Equatable {
        public var line: Int
        public var column: Int
    }

    /// The file or profile name concerned.
    public var origin: String
    /// What is wrong.
    public var problems: [String]
    /// Where in the file, when one place is wrong.
    public var location: Location?

    /// `file:line:column: problems`, as compilers print it.
    public var description: String {
        let place = location.map { "\(origin):\($0.line):\($0.column)" } ?? origin
        return "\(place): " + problems.joined(separator: "; ")
    }
}
