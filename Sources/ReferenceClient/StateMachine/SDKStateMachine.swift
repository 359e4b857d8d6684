import ChatProtocol
import MockChatCore

/// The documented chat SDK as a pure state machine: inputs in, ``SDKAction``s out.
///
/// It does no I/O and never reads a clock: every input carries `now`, timers are
/// actions, and the driver (``SDKClient``) executes what comes out. Timings and
/// policies come from the ``Profile``.
///
/// ## Inputs
/// - ``perform(_:call:now:)``: an ``SDKCommand`` (API call, lifecycle, network, relaunch).
/// - ``socketOpened(now:)``, ``socketFailed(_:now:)``, ``frameReceived(_:now:)``,
///   ``socketClosed(receivedCode:now:)``: what happened to the socket it asked for.
/// - ``timerFired(_:now:)``: one of its ``TimerKind`` timers went off.
///
/// ## Connection phases
/// ```
///          start            socketOpened               login ok
///   idle ─────────► opening ─────────────► authenticating ─────────► connected
///    ▲                 │ failed                  │ │ no reply            │ │ │
///    │                 ▼                         │ ▼                     │ │ │ logout
///    │             backingOff ◄──────────────────┼─── drop, heartbeat ───┘ │ ▼
///    │   timer:      │  ▲  │                     │    timeout              │ loggingOut
///    │   opening ◄───┘  │  │ network down        │ login error             │   │ reply or close
///    │                  │  ▼                     ▼                         │   ▼
///    │   network up ── paused              idle + error event            │  idle
///    │                                                                     │ device.kicked / 4001
///    │                                                                     ▼
///    └──── disconnect(), background close (from any phase)              kicked ─ connect() ─► opening
/// ```
/// "start" is login in auto mode, connect(), initialize after a relaunch or a return
/// to the foreground (auto mode). A failed attempt goes to `backingOff` only when the
/// loop continues (automatic attempts; a login under `retryLoginUntilAnswered`);
/// otherwise the round ends in `idle` and the waiting call fails.
/// Status: `idle`/`paused` are disconnected; `opening`/`authenticating`/`backingOff`
/// are connecting; `connected`/`loggingOut` are connected; `kicked` is kicked.
///
/// Each phase carries its own data, so no combination of loose variables can say two
/// things at once: the phases of a round (`opening`, `authenticating`, `backingOff`,
/// `paused`) hold its ``Round`` (backoff step, waiting calls), `connected` holds the
/// ``Heartbeat``, `loggingOut` the logout request, `kicked` the reason; the app state
/// holds the background hold that keeps a socket alive.
///
/// ## Behaviour and its sources
/// - **Auto mode** (000, "Default SDK behaviour", "Auto Mode"): login opens the socket,
///   logout closes it; after ``SDKCommand/relaunch`` the persisted user makes
///   `initialize` connect again on its own.
/// - **Manual mode** (000, "Managing Manually"): `login` only records the user on the
///   device (completes with `.none`; `getLoggedInUser` then returns a user carrying only
///   the uid, or nil for a token login); the server checks the credentials when
///   `connect()` opens the socket. `connect()` before login → ERR_NOT_LOGGED_IN, while
///   connected → ERROR_WEBSOCKETS_ALLREADY_IN_CONNECTED_STATE, without network →
///   ERR_NO_INTERNET, server unreachable → ERR_WEBSOCKET_ERROR (000, "Common Error Codes").
///   A failed `connect()` does not retry (003, tip under "Automatic reconnection").
/// - **ping()** (000, "Maintain long-standing background connection"): refused in auto
///   mode with ERROR_PING_NOT_AVAILABLE (checked first), then ERR_NOT_LOGGED_IN.
/// - **Heartbeat**: while the app is in the foreground, or a background hold keeps the
///   socket, the SDK pings every `keepAliveInterval`; a reply missing for `pongTimeout`
///   is a heartbeat timeout: the socket is dropped and reconnection starts (003,
///   "Automatic reconnection", weak network). The same deadline bounds the login reply.
/// - **Background without services**: auto mode follows
///   ``Profile/backgroundWithoutServices`` (CometChat: close at once, 000 "Auto Mode";
///   Nexconn: close after `backgroundDisconnectAfter`, 003 "Automatic reconnection").
///   Manual mode keeps the socket but the suspended app stops its heartbeat, so the
///   server's 30 s heartbeat timeout ends it unless the app calls ping() (000, "Manual
///   Mode SDK behaviour"). Project choice: the SDK sends one last ping as it goes to the
///   background, so those 30 s count from the moment the app left the foreground.
/// - **Background with services** (002): after `configureServices` the socket and the
///   heartbeat live `backgroundTaskWindow`, then the socket is closed and
///   `backgroundTaskEnabled` turns false. The flag turns true when the task starts and
///   keeps its value on return to the foreground, so an app can tell whether it missed
///   updates (002, Step 4 usage table). `configureServices` acts on the next background
///   transition; called while already in the background it starts the task then.
/// - **Reconnection** (000, "Reconnection"; 003): a connection lost in the foreground is
///   retried in both modes on the backoff schedule. Nothing reconnects in the
///   background; on return auto mode reconnects, manual mode waits for `connect()`.
///   The schedule restarts on foreground and on network change, pauses while the
///   network is down, and `disconnect()` stops it (also for later foregrounds, until
///   `connect()`, `login` or a relaunch).
/// - **Device conflict** (003, "Reconnection kick strategy"): automatic attempts send
///   `reconnect: true` with the settings' `reconnectKickEnable`; app-initiated ones
///   (login, connect, initialize after relaunch) send `reconnect: false`. A login error
///   (e.g. ERR_RECONNECT_KICK_REFUSED) ends the loop with a connection error event;
///   `device.kicked` (or close 4001) makes the status kicked and nothing reconnects.
/// - **Calls over the socket**: getUser and fetchNext need a live connection; without
///   one they fail with ERR_NO_INTERNET or ERR_WEBSOCKET_ERROR (project choice: this
///   model carries every call over the socket).
/// - **Relaunch**: the socket dies with the process, pending calls never complete,
///   settings, listeners and cursors are gone; a confirmed login survives.
public struct SDKStateMachine: Sendable {
    /// The timings and policies in force.
    public let profile: Profile

    var phase: Phase = .idle
    var settings: AppSettings?
    var session: Session?
    var app: AppState = .active
    var network: NetworkCondition = .up
    var servicesConfigured = false
    /// What `backgroundTaskEnabled()` answers.
    public internal(set) var backgroundTaskEnabled = false
    /// Unanswered requests in the order sent; a call's `due` is when it fails
    /// (calls.reply-deadline), a heartbeat has none (its deadline is the keep-alive's).
    var pending: [(id: RequestID, request: PendingRequest, due: Instant?)] = []
    var nextRequestNumber: Int64 = 1
    var userListeners: [String] = []
    var connectionListeners: [String] = []
    var cursors: [String: Cursor] = [:]
    var usersRequests: [String: UsersRequestSpec] = [:]
    var stayOffline = false
    var armedTimers: Set<TimerKind> = []
    var output: [SDKAction] = []
    /// The rule-book ids of the rules the last input applied (``cite(_:)``).
    public internal(set) var citations: [String] = []
    var now = Instant(milliseconds: 0)

    /// A machine for an app that has not called `initialize` yet.
    public init(profile: Profile) {
        self.profile = profile
    }

    /// What `getConnectionStatus()` answers.
    public var status: ConnectionStatus { phase.status }

    /// What `getLoggedInUser()` answers: the user the server confirmed, or in manual
    /// mode before the first connect a user carrying only the uid.
    public var loggedInUser: User? {
        guard let session, session.confirmed else { return nil }
        return session.user
    }

    /// Whether connections are managed by the SDK (auto mode).
    public var isAutoMode: Bool { settings?.autoEstablishSocketConnection ?? profile.defaultAutoMode }

    /// Whether `initialize` has been called since launch.
    public var isInitialized: Bool { settings != nil }

    // MARK: Input bookkeeping

    mutating func begin(_ now: Instant) {
        self.now = now
        output.removeAll(keepingCapacity: true)
        citations.removeAll()
    }

    mutating func finish() -> [SDKAction] {
        defer { output.removeAll() }
        return output
    }

    mutating func emit(_ action: SDKAction) {
        switch action {
        case .userEvent(_, _, let user): citePresence(user)
        case .completeCall(_, .failure(let error)): citeFailure(error)
        default: break
        }
        output.append(action)
    }

    /// Moves to `next`, telling connection listeners when the status changes.
    mutating func enter(_ next: Phase) {
        let before = phase.status
        phase = next
        guard next.status != before else { return }
        citeStatusChange(to: next)
        let event: ConnectionEvent = switch next {
        case .kicked(let reason): .kicked(reason: reason)
        default:
            switch next.status {
            case .connecting: .connecting
            case .connected: .connected
            case .disconnected, .kicked: .disconnected
            }
        }
        emit(.connectionEvent(listeners: connectionListeners, event))
    }

    mutating func schedule(_ kind: TimerKind, seconds: Double) {
        schedule(kind, milliseconds: Profile.milliseconds(seconds))
    }

    mutating func schedule(_ kind: TimerKind, milliseconds: Int64) {
        armedTimers.insert(kind)
        citeTimer(kind)
        emit(.scheduleTimer(kind, afterMilliseconds: milliseconds))
    }

    /// Disarms a timer; nothing is emitted when it is not armed.
    mutating func cancelTimer(_ kind: TimerKind) {
        guard armedTimers.remove(kind) != nil else { return }
        emit(.cancelTimer(kind))
    }

    mutating func complete(_ call: CallID?, _ result: CallResult) {
        guard let call else { return }
        emit(.completeCall(call, result))
    }

    /// Sends a request with the next id.
    mutating func send(_ request: Request) -> RequestID {
        let id = RequestID.integer(nextRequestNumber)
        nextRequestNumber += 1
        emit(.send(id, request))
        return id
    }
}
