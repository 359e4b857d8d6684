import ChatProtocol
import EventLoop

/// One thing a scenario can observe about a client, stamped with the clock's time.
public struct ClientObservation: Sendable, Equatable, CustomStringConvertible {
    /// When it happened (the loop's clock).
    public var at: Instant
    /// The client's name.
    public var client: String
    /// What happened.
    public var event: Event

    public init(at: Instant, client: String, event: Event) {
        self.at = at
        self.client = client
        self.event = event
    }

    /// What happened.
    public enum Event: Sendable, Equatable {
        /// The runner performed a command; API calls carry their id.
        case command(SDKCommand, CallID?)
        /// An API call completed.
        case callCompleted(CallID, CallResult)
        /// A connection event, with the connection listeners that received it.
        case connection(ConnectionEvent, listeners: [String])
        /// One user listener received a presence change.
        case user(listener: String, PresenceChange, User)
        /// A socket is being opened (`seed` drives its handshake key and masks).
        case socketOpening(seed: UInt64)
        /// The WebSocket handshake completed.
        case socketOpened
        /// The socket could not be opened.
        case socketFailed(String)
        /// The client started a closing handshake with this code.
        case socketClosing(UInt16)
        /// The client cut the socket off abruptly.
        case socketDropped
        /// The server ended the socket: its close code, or why the stream died.
        case socketClosed(received: UInt16?, abnormal: String?)
        /// A text frame the client sent.
        case frameSent(String)
        /// A text frame the client received and passed to the SDK.
        case frameReceived(String)
        /// A text frame lost to a weak network.
        case frameDiscarded(String)
        /// A text frame the SDK could not read.
        case frameUnreadable(String)
        /// One of the SDK's timers fired.
        case timerFired(TimerKind)
        /// The rule-book rules the machine applied to one input (``SDKStateMachine/citations``).
        case rules([String])
    }

    public var description: String { "\(at) \(client) \(event)" }
}
