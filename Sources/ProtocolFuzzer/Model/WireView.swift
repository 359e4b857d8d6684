import ChatProtocol

/// What one wire client should have seen so far, as the reference model predicts it:
/// whether it is open, how it was closed, and how many frames of each kind arrived.
public struct WireView: Sendable, Equatable {
    /// A kind of frame the model counts, with the scenario pattern that matches it.
    public enum FrameKind: Sendable, Hashable, Comparable {
        /// The successful login reply for this uid.
        case loggedIn(String)
        /// A `ping` reply.
        case pong
        /// The `logout` reply.
        case loggedOut
        /// An error reply with this code.
        case error(String)
        /// `device.kicked`.
        case kicked
        /// `user.online` about this uid.
        case online(String)
        /// `user.offline` about this uid.
        case offline(String)

        /// The fields of a `frames:` pattern that match exactly this kind.
        var pattern: [(String, JSONValue)] {
            switch self {
            case .loggedIn(let uid): [("result.user.uid", .string(uid))]
            case .pong: [("result.pong", true)]
            case .loggedOut: [("result", .object(JSONObject()))]
            case .error(let code): [("error.errorCode", .string(code))]
            case .kicked: [("event", "device.kicked")]
            case .online(let uid): [("event", "user.online"), ("user.uid", .string(uid))]
            case .offline(let uid): [("event", "user.offline"), ("user.uid", .string(uid))]
            }
        }
    }

    public internal(set) var isOpen = true
    /// The close code the client received; nil when the stream ended without a close
    /// frame. Only meaningful once closed and when ``closeCodeKnown``.
    public internal(set) var closeCode: Int?
    /// False for closes whose code the model does not predict (the client's own close).
    public internal(set) var closeCodeKnown = false
    /// Frames received, by kind.
    public internal(set) var counts: [FrameKind: Int] = [:]
    /// Every frame received.
    public internal(set) var total = 0
    /// False once the model cannot say exactly which frames arrived (several
    /// connections closing at the same instant in an order the contract leaves open).
    public internal(set) var countsKnown = true

    mutating func receive(_ kind: FrameKind) {
        counts[kind, default: 0] += 1
        total += 1
    }

    mutating func closed(code: Int?, known: Bool = true) {
        isOpen = false
        closeCode = code
        closeCodeKnown = known
    }
}
