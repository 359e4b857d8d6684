/// One thing that happened in a scenario run, placed on a lane at a virtual time
/// (the rows of the HTML report's sequence diagram).
public struct TimelineEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// A frame from a client to the server.
        case request
        /// A frame from the server to a client.
        case reply
        /// A connection ended (with its code, or a drop).
        case close
        /// A fault the server applied.
        case fault
        /// The virtual clock moved.
        case clock
        /// A scenario step (the failing one is marked).
        case step
    }

    /// Scenario seconds.
    public var at: Double
    /// The client or wire name, or `server`.
    public var lane: String
    public var kind: Kind
    public var label: String
    /// The step that failed.
    public var failed = false

    public init(at: Double, lane: String, kind: Kind, label: String, failed: Bool = false) {
        self.at = at
        self.lane = lane
        self.kind = kind
        self.label = label
        self.failed = failed
    }
}
