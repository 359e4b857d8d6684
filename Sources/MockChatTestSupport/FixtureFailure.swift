/// A failure of the fixture itself (a connection that never completed, a reply that
/// never came), thrown so that the test stops with a readable message.
public struct FixtureFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
