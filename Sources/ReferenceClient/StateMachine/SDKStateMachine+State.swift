import ChatProtocol

extension SDKStateMachine {
    /// Where the connection stands.
    enum Phase: Sendable, Equatable {
        /// No socket and no attempt under way.
        case idle
        /// `openSocket` was emitted; `reconnect` goes into the login.
        case opening(reconnect: Bool, Round)
        /// The socket is open and the login was sent with this id.
        case authenticating(RequestID, reconnect: Bool, Round)
        /// Logged in over a live socket, with the SDK's own heartbeat.
        case connected(Heartbeat)
        /// `logout` was sent with this id on behalf of this call.
        case loggingOut(RequestID, CallID?)
        /// The backoff timer is armed; the next attempt follows when it fires.
        case backingOff(Round)
        /// The reconnection loop waits for the network to come back.
        case paused(Round)
        /// Another device took over.
        case kicked(reason: String)

        /// The round in progress: set only in the phases that have one.
        var round: Round? {
            get {
                switch self {
                case .opening(_, let round), .authenticating(_, _, let round), .backingOff(let round),
                     .paused(let round): round
                case .idle, .connected, .loggingOut, .kicked: nil
                }
            }
            set {
                guard let newValue else { return }
                switch self {
                case .opening(let reconnect, _): self = .opening(reconnect: reconnect, newValue)
                case .authenticating(let id, let reconnect, _): self = .authenticating(id, reconnect: reconnect, newValue)
                case .backingOff: self = .backingOff(newValue)
                case .paused: self = .paused(newValue)
                case .idle, .connected, .loggingOut, .kicked: break
                }
            }
        }

        var isKicked: Bool {
            if case .kicked = self { return true }
            return false
        }

        var isConnected: Bool {
            if case .connected = self { return true }
            return false
        }

        var status: ConnectionStatus {
            switch self {
            case .idle, .paused: .disconnected
            case .opening, .authenticating, .backingOff: .connecting
            case .connected, .loggingOut: .connected
            case .kicked: .kicked
            }
        }

        /// Whether the driver holds a socket for this phase.
        var hasSocket: Bool {
            switch self {
            case .opening, .authenticating, .connected, .loggingOut: true
            case .idle, .backingOff, .paused, .kicked: false
            }
        }
    }

    /// The SDK's own keep-alive pings on a connected socket.
    enum Heartbeat: Sendable, Equatable {
        /// No pings: the app is suspended in the background.
        case stopped
        /// A ping every `keepAliveInterval`; `awaiting` is the one whose reply is due
        /// within `pongTimeout`.
        case running(awaiting: RequestID?)
    }

    /// The app's lifecycle as the SDK sees it.
    enum AppState: Sendable, Equatable {
        case active
        case inactive
        /// In the background; a `hold` keeps the socket alive until the
        /// `backgroundWindow` timer fires.
        case background(hold: BackgroundHold?)

        var isBackground: Bool {
            if case .background = self { return true }
            return false
        }

        /// Whether the socket may keep its heartbeat: in the foreground, or held in
        /// the background.
        var keepsHeartbeat: Bool { self != .background(hold: nil) }
    }

    /// Why the socket is still allowed in the background.
    enum BackgroundHold: Sendable, Equatable {
        /// A configured background task (002).
        case task
        /// The profile's background delay (003).
        case delay
    }

    /// How the user logs in.
    enum Credentials: Sendable, Equatable {
        case authKey(uid: String, key: String)
        case token(String)

        var uid: String? {
            if case .authKey(let uid, _) = self { return uid }
            return nil
        }
    }

    /// The logged-in user as stored on the device.
    struct Session: Sendable, Equatable {
        var credentials: Credentials
        var user: User?
        /// False while an auto-mode login waits for the server's answer.
        var confirmed: Bool
    }

    /// One connection round: the attempts made for a login, a `connect()` or a
    /// reconnection, until one logs in or the round gives up.
    struct Round: Sendable, Equatable {
        /// Failed attempts so far: the next backoff step.
        var failures = 0
        /// The calls that complete when the round ends.
        var waiters: [Waiter] = []
    }

    /// A call that completes when the current connection round ends.
    enum Waiter: Sendable, Equatable {
        case login(CallID?)
        case connect(CallID?)

        var isLogin: Bool {
            if case .login = self { return true }
            return false
        }
    }

    /// A request sent and not yet answered.
    enum PendingRequest: Sendable, Equatable {
        case heartbeat
        case ping(CallID?)
        case getUser(CallID?)
        case listUsers(CallID?, request: String)
    }

    /// Paging state of one users request.
    enum Cursor: Sendable, Equatable {
        case next(String)
        case exhausted
    }
}
