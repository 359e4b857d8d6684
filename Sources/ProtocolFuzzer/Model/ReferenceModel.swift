import ChatProtocol

/// A deliberately simple model of presence, device policy and heartbeats, written
/// from docs/PROTOCOL.md (§4, §7, §8, §9, §12.7) and the SDK documents 003 (device
/// conflict) and 004 (presence), and nothing else: it shares no code with
/// `PresenceEngine`. The fuzzer runs the same history against the server and
/// against this model and compares what the clients observe.
///
/// State is a plain list of live connections in the order they were opened, each
/// with its user, device, platform, subscription and the time of its last inbound
/// frame, plus the faults in force and, per wire client, what it should have seen
/// (``WireView``). Every input is one ``FuzzAction``.
///
/// Rules, as the model applies them:
/// - A user is online while at least one of their connections is logged in. Going
///   from none to one sends `user.online`; going from one to none, however it
///   happens, sends `user.offline`. Events go to logged-in connections of other
///   users whose subscription covers the user (all; friends, either side listing the
///   other; roles; none).
/// - Login checks: the key must match (`ERR_AUTH_FAILED`), then the uid must exist
///   (`ERR_UID_NOT_FOUND`), then the user must be active (`ERR_USER_DEACTIVATED`);
///   each refusal is an error reply and close 4003 (§18: the key is checked before
///   the uid). A second login on a logged-in connection gets
///   `ERR_ALREADY_LOGGED_IN` and changes nothing.
/// - Device policy: a connection of the same user with the same device id is
///   kicked. A mobile login when the user already has `mobileDevicesPerUser` other
///   mobile devices online kicks the oldest of them, unless the login is a reconnect
///   with `reconnectKickEnable` while the app has `clientKickControl` on: then the
///   newcomer is refused (`ERR_RECONNECT_KICK_REFUSED`, close 4004) and nothing else
///   changes. Kicked connections get `device.kicked` and close 4001; the user stays
///   online throughout, so no presence event is sent.
/// - Heartbeat: every inbound text frame is activity. A connection, logged in or
///   not, that has been silent for the timeout (30 s) is closed with 4002 at exactly
///   that moment.
/// - Login deadline: a connection still not logged in 10 s after it opened is closed
///   with 4010 at exactly that moment (before a heartbeat due at the same instant).
/// - Faults: `drop` resets the matching logged-in connections (no close frame);
///   a `blackhole` swallows the text frames of matching logged-in connections, which
///   then count as silent, and nothing the server sends reaches them, close frames
///   included (§12.7, §18: a blackhole cuts both ways). Loading app settings or a
///   reset closes every connection with 4009.
///
/// Where the contract leaves the outcome open, the model stops predicting rather
/// than guess: when several connections time out at the same instant, or a reset
/// closes them all, the order is unspecified, so whether a closing subscriber still
/// receives the `user.offline` of another closing user is not checked. The close
/// code a client receives after closing itself is not predicted either.
///
/// Not modelled: `delay` and `refuseConnections` faults, queries (`users.get`,
/// `users.list`) and `lastActiveAt`.
public struct ReferenceModel: Sendable {
    /// The app settings the model depends on, read from the same `app.json` the server
    /// starts with (`ReferenceModel.Settings+AppConfiguration.swift`), so a changed fixture
    /// changes the model too.
    public struct Settings: Sendable, Equatable {
        public var clientKickControl: Bool
        public var mobileDevicesPerUser: Int
        public var heartbeatMilliseconds: Int64
        public var loginTimeoutMilliseconds: Int64
        public var authKey: String
    }

    /// One open connection.
    public struct Connection: Sendable, Equatable {
        public var name: String
        /// Nil until a login succeeds.
        public var login: LoginSpec?
        /// Milliseconds since the start: the last inbound text frame, or the opening.
        public var lastActivity: Int64
        /// Milliseconds since the start when the connection opened.
        public var openedAt: Int64 = 0
        /// Order of successful logins: lower is older.
        var loginNumber = 0

        public var isLoggedIn: Bool { login != nil }
        public var uid: String? { login?.uid }
    }

    /// What the last action changed, for the expectations that follow it.
    struct StepRecord: Sendable {
        var framesChanged: [String: Set<WireView.FrameKind>] = [:]
        var closed: [String] = []
    }

    public let roster: Roster
    public let initialSettings: Settings
    public private(set) var settings: Settings
    /// Milliseconds since the history began.
    public private(set) var now: Int64 = 0
    /// Open connections, in the order they were opened.
    public private(set) var live: [Connection] = []
    public private(set) var blackholes: [FaultSelector] = []
    /// Every wire client of the history, open or closed.
    public private(set) var wires: [String: WireView] = [:]
    /// Wire names in the order they were opened.
    public private(set) var wireOrder: [String] = []
    var step = StepRecord()
    private var logins = 0

    public init(roster: Roster, settings: Settings) {
        self.roster = roster
        initialSettings = settings
        self.settings = settings
    }

    // MARK: Queries

    /// Users with at least one logged-in connection, sorted.
    public var onlineUsers: [String] {
        Array(Set(live.compactMap(\.uid))).sorted()
    }

    public func isOnline(_ uid: String) -> Bool { live.contains { $0.uid == uid } }

    public func connection(_ name: String) -> Connection? { live.first { $0.name == name } }

    /// Whether the server swallows this connection's frames and sends it nothing.
    public func isBlackholed(_ connection: Connection) -> Bool {
        guard let login = connection.login else { return false }
        return blackholes.contains { $0.matches(uid: login.uid, deviceId: login.device) }
    }

    // MARK: Input

    /// Applies one action. Returns false, changing nothing, when the action cannot
    /// happen now (a step on a connection that is not open, a name already used);
    /// the shrinker relies on this to drop steps whose preconditions it removed.
    @discardableResult
    public mutating func apply(_ action: FuzzAction) -> Bool {
        step = StepRecord()
        switch action {
        case .connect(let name, let login):
            guard wires[name] == nil else { return false }
            live.append(Connection(name: name, login: nil, lastActivity: now, openedAt: now))
            wires[name] = WireView()
            wireOrder.append(name)
            if let login { receiveLogin(login, on: name) }
        case .login(let name, let login):
            guard connection(name) != nil else { return false }
            receiveLogin(login, on: name)
        case .ping(let name):
            guard let connection = connection(name) else { return false }
            guard inbound(name) else { break }
            send(connection.isLoggedIn ? .pong : .error(ErrorCode.notLoggedIn.rawValue), to: name)
        case .logout(let name):
            guard let connection = connection(name) else { return false }
            guard inbound(name) else { break }
            if connection.isLoggedIn {
                send(.loggedOut, to: name)
                close([name], code: 1000)
            } else {
                send(.error(ErrorCode.notLoggedIn.rawValue), to: name)
            }
        case .close(let name):
            guard connection(name) != nil else { return false }
            close([name], code: nil, codeKnown: false)
        case .drop(let name):
            guard connection(name) != nil else { return false }
            close([name], code: nil)
        case .advance(let milliseconds):
            guard milliseconds >= 0 else { return false }
            advance(to: now + milliseconds)
        case .faultDrop(let selector):
            let targets = live.filter { c in c.login.map { selector.matches(uid: $0.uid, deviceId: $0.device) } ?? false }
            for target in targets { close([target.name], code: nil) }
        case .blackhole(let selector, let enabled):
            blackholes.removeAll { $0 == selector }
            if enabled { blackholes.append(selector) }
        case .clearFaults:
            blackholes = []
        case .setApp(let clientKickControl, let mobileDevicesPerUser):
            close(live.map(\.name), code: 4009, together: true)
            settings.clientKickControl = clientKickControl
            settings.mobileDevicesPerUser = mobileDevicesPerUser
        case .reset:
            close(live.map(\.name), code: 4009, together: true)
            settings = initialSettings
            blackholes = []
        }
        return true
    }

    // MARK: Rules

    /// A text frame from `name` reaches the server. False when a blackhole swallows it.
    private mutating func inbound(_ name: String) -> Bool {
        guard let index = live.firstIndex(where: { $0.name == name }), !isBlackholed(live[index]) else { return false }
        live[index].lastActivity = now
        return true
    }

    private mutating func send(_ kind: WireView.FrameKind, to name: String) {
        guard let connection = connection(name), !isBlackholed(connection) else { return }
        wires[name]?.receive(kind)
        step.framesChanged[name, default: []].insert(kind)
    }

    private func covers(_ viewer: LoginSpec, _ uid: String) -> Bool {
        switch viewer.presence {
        case .allUsers: true
        case .friends: roster.areFriends(viewer.uid, uid)
        case .roles(let roles): roster.role(uid).map(roles.contains) ?? false
        case .none: false
        }
    }

    /// Sends `kind` about `uid` to every live subscriber of another user.
    private mutating func broadcast(_ kind: WireView.FrameKind, about uid: String) {
        for viewer in live {
            guard let login = viewer.login, login.uid != uid, covers(login, uid) else { continue }
            send(kind, to: viewer.name)
        }
    }

    private mutating func receiveLogin(_ spec: LoginSpec, on name: String) {
        guard inbound(name), let index = live.firstIndex(where: { $0.name == name }) else { return }
        guard !live[index].isLoggedIn else {
            send(.error(ErrorCode.alreadyLoggedIn.rawValue), to: name)
            return
        }
        func refuse(_ code: ErrorCode, close closeCode: Int) {
            send(.error(code.rawValue), to: name)
            close([name], code: closeCode)
        }
        guard (spec.authKey ?? settings.authKey) == settings.authKey else { return refuse(.authFailed, close: 4003) }
        guard roster.exists(spec.uid) else { return refuse(.uidNotFound, close: 4003) }
        guard !roster.isDeactivated(spec.uid) else { return refuse(.userDeactivated, close: 4003) }

        let others = live.filter { $0.uid == spec.uid }.sorted { $0.loginNumber < $1.loginNumber }
        var kicked = others.filter { $0.login?.device == spec.device }.map(\.name)
        if spec.platform == .mobile {
            let otherMobiles = others.filter { $0.login?.platform == .mobile && $0.login?.device != spec.device }
            if otherMobiles.count >= settings.mobileDevicesPerUser {
                if spec.reconnect && spec.reconnectKickEnable && settings.clientKickControl {
                    return refuse(.reconnectKickRefused, close: 4004)
                }
                kicked += otherMobiles.prefix(otherMobiles.count - settings.mobileDevicesPerUser + 1).map(\.name)
            }
        }
        let wasOnline = !others.isEmpty
        live[index].login = spec
        live[index].loginNumber = logins
        logins += 1
        for old in kicked {
            send(.kicked, to: old)
            close([old], code: 4001)
        }
        send(.loggedIn(spec.uid), to: name)
        if !wasOnline { broadcast(.online(spec.uid), about: spec.uid) }
    }

    /// Moves time to `target`, closing silent connections at their deadlines in order.
    private mutating func advance(to target: Int64) {
        while let due = live.map(deadline).min(), due <= target {
            now = due
            let late = live.filter { !$0.isLoggedIn && $0.openedAt + settings.loginTimeoutMilliseconds == due }.map(\.name)
            close(late, code: 4010, together: true)
            let silent = live.filter { $0.lastActivity + settings.heartbeatMilliseconds == due }.map(\.name)
            close(silent, code: 4002, together: true)
        }
        now = target
    }

    /// When the connection is closed unless something happens first.
    private func deadline(_ connection: Connection) -> Int64 {
        let heartbeat = connection.lastActivity + settings.heartbeatMilliseconds
        guard !connection.isLoggedIn else { return heartbeat }
        return min(heartbeat, connection.openedAt + settings.loginTimeoutMilliseconds)
    }

    /// Ends the listed connections. The server closes with `code`, or the stream just
    /// ends when `code` is nil; a blackholed connection never gets a close frame.
    /// With `together`, the connections close at one instant in an unspecified order.
    private mutating func close(_ names: [String], code: Int?, codeKnown: Bool = true, together: Bool = false) {
        guard !names.isEmpty else { return }
        let closing = live.filter { names.contains($0.name) }
        let onlineBefore = Set(onlineUsers)
        for connection in closing {
            let silent = isBlackholed(connection)
            wires[connection.name]?.closed(code: silent ? nil : code, known: codeKnown)
            step.closed.append(connection.name)
        }
        live.removeAll { names.contains($0.name) }
        let wentOffline = onlineBefore.subtracting(onlineUsers).sorted()
        for uid in wentOffline {
            broadcast(.offline(uid), about: uid)
            guard together else { continue }
            for viewer in closing {
                guard let login = viewer.login, login.uid != uid, covers(login, uid), !isBlackholed(viewer) else { continue }
                wires[viewer.name]?.countsKnown = false
            }
        }
    }
}
