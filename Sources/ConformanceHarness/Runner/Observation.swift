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

    /// One call of a registered connection listener.
    struct ListenerCall {
        var listener: String
        /// The connection event it was called with.
        var name: String
    }

    var time: Instant
    /// `connecting`, `connected`, `disconnected`, `kicked` or `error`.
    var connectionEvent: String?
    var listenerCall: ListenerCall?
    var userEvent: UserEvent?
    /// A socket was being opened: one connection attempt.
    var isAttempt = false
    /// The rule-book rules the reference model applied to one input.
    var rules: [String]?

    init(time: Instant, connectionEvent: String? = nil, listenerCall: ListenerCall? = nil, userEvent: UserEvent? = nil,
         isAttempt: Bool = false) {
        self.time = time
        self.connectionEvent = connectionEvent
        self.listenerCall = listenerCall
        self.userEvent = userEvent
        self.isAttempt = isAttempt
    }

    /// What one observation of the reference model shows: a connection event is the
    /// SDK's event followed by one call of each listener that received it.
    static func all(_ observation: ClientObservation) -> [Observation] {
        let time = observation.at
        switch observation.event {
        case .connection(let event, let listeners):
            let name = event.name
            return [Observation(time: time, connectionEvent: name)]
                + listeners.map { Observation(time: time, listenerCall: ListenerCall(listener: $0, name: name)) }
        case .user(let listener, let change, let user):
            return [Observation(time: time, userEvent: UserEvent(time: time, listener: listener,
                                                                 change: change == .online ? "online" : "offline", user: user))]
        case .socketOpening:
            return [Observation(time: time, isAttempt: true)]
        case .rules(let ids):
            var cited = Observation(time: time)
            cited.rules = ids
            return [cited]
        default:
            return []
        }
    }
}
