import ChatProtocol
import MockChatCore
import ReferenceClient

/// A client observation reduced to what expectations compare.
struct Observation {
    struct UserEvent {
        var time: Instant
        var listener: String
        /// `online` or `offline`.
        var change: String
        var user: User
    }

    var time: Instant
    /// `connecting`, `connected`, `disconnected`, `kicked` or `error`.
    var connectionEvent: String?
    var userEvent: UserEvent?
    /// A socket was being opened: one connection attempt.
    var isAttempt = false

    init(time: Instant, connectionEvent: String? = nil, userEvent: UserEvent? = nil, isAttempt: Bool = false) {
        self.time = time
        self.connectionEvent = connectionEvent
        self.userEvent = userEvent
        self.isAttempt = isAttempt
    }

    init?(_ observation: ClientObservation) {
        time = observation.at
        switch observation.event {
        case .connection(let event, _):
            switch event {
            case .connecting: connectionEvent = "connecting"
            case .connected: connectionEvent = "connected"
            case .disconnected: connectionEvent = "disconnected"
            case .kicked: connectionEvent = "kicked"
            case .error: connectionEvent = "error"
            }
        case .user(let listener, let change, let user):
            userEvent = UserEvent(time: observation.at, listener: listener, change: change == .online ? "online" : "offline",
                                  user: user)
        case .socketOpening:
            isAttempt = true
        default:
            return nil
        }
    }
}
