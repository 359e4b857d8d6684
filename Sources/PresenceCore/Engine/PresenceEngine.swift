import ChatProtocol
import MockChatCore

/// The server's presence, session and device-policy logic as a pure state machine.
///
/// Inputs are transport facts (a connection opened, a request arrived, a connection
/// ended, a heartbeat is due); outputs are ``EngineAction`` values for the owner to
/// carry out. The engine never touches a socket or reads a clock: `now` comes with
/// every input. That makes every rule below testable as a sequence of actions, and
/// replayable.
///
/// ```
///   opened ──► awaiting-login ──login ok──► logged-in ──close/kick/timeout──► gone
///                  │                              ▲
///                  └──login refused──► gone       └── ping / users.* / logout
/// ```
///
/// Rules (sources in docs/CONFORMANCE.md):
/// - A user is online while at least one of its connections is logged in, and goes
///   offline, with `lastActiveAt` set to that moment, when the last one ends, however
///   it ends (004 "Real-time Presence"). A second device causes no second online event.
/// - `user.online` / `user.offline` go to logged-in connections whose subscription
///   covers the user (all, friends, roles), never to the user's own connections.
/// - ``DevicePolicy`` decides which devices a login displaces (003 "Reconnection kick
///   strategy": the same device, and the oldest mobiles beyond `mobileDevicesPerUser`):
///   each gets `device.kicked` and close 4001; or the newcomer is refused with
///   `ERR_RECONNECT_KICK_REFUSED` and close 4004.
/// - A connection from which nothing arrives for the heartbeat timeout is closed 4002.
/// - A connection that has not logged in within the login timeout is closed 4010.
public struct PresenceEngine: Sendable {
    public private(set) var directory: UserDirectory
    public private(set) var settings: AppConfiguration
    private var sessions: [ConnectionID: SessionInfo] = [:]
    /// Logged-in connections per uid, indexed for the device policy.
    private var connectionsByUser: [String: UserConnections] = [:]
    /// Logged-in connections by what they subscribed to: the candidates for a
    /// presence event, without a scan of every session.
    private var allSubscribers = ConnectionSet()
    private var roleSubscribers: [String: ConnectionSet] = [:]
    /// Keyed by the viewer's uid.
    private var friendSubscribers: [String: ConnectionSet] = [:]
    private var lastActiveAt: [String: Double] = [:]
    /// When the users were loaded: the `lastActiveAt` of users whose record has none.
    private var loadedAt: Double
    /// Cluster mode only (PresenceEngine+Cluster.swift): the devices of every node.
    var cluster: ClusterView?

    /// One user's logged-in connections.
    private struct UserConnections {
        var count = 0
        /// At most one connection per device: a second login from it displaces the first.
        var byDevice: [String: ConnectionID] = [:]
        /// Mobile connections, oldest first (at most `mobileDevicesPerUser`).
        var mobiles: [ConnectionID] = []
    }

    /// `now` is when the users count as loaded (see ``UserRecord/lastActiveAt``).
    public init(directory: UserDirectory, settings: AppConfiguration, now: Instant = Instant(seconds: 0)) {
        self.directory = directory
        self.settings = settings
        loadedAt = now.seconds
    }

    // MARK: Queries

    /// Every open connection, in order of arrival. O(n log n) in open connections.
    public var connections: [SessionInfo] { sessions.keys.sorted().compactMap { sessions[$0] } }

    /// One connection.
    public func session(_ id: ConnectionID) -> SessionInfo? { sessions[id] }

    /// Users with at least one logged-in connection, sorted. O(u log u) in online users.
    public var onlineUsers: [String] {
        guard let cluster else { return connectionsByUser.keys.sorted() }
        return Set(connectionsByUser.keys).union(cluster.devices.keys).sorted()
    }

    public func isOnline(_ uid: String) -> Bool { connectionsByUser[uid] != nil || cluster?.isOnline(uid) == true }

    /// The user object of `uid` as `viewer` sees it.
    public func user(_ uid: String, viewer: String?) -> User? {
        guard let record = directory.record(uid) else { return nil }
        return User(uid: uid, name: record.name, avatar: record.avatar, link: record.link, role: record.role,
                    status: isOnline(uid) ? .online : .offline, statusMessage: record.statusMessage,
                    lastActiveAt: lastActiveAt[uid] ?? record.lastActiveAt ?? loadedAt,
                    hasBlockedMe: viewer.map { directory.hasBlocked(uid, $0) } ?? false,
                    blockedByMe: viewer.map { directory.hasBlocked($0, uid) } ?? false,
                    deactivatedAt: record.deactivatedAt, tags: record.tags, metadata: record.metadata)
    }

    // MARK: Inputs

    /// A WebSocket connection completed its handshake. O(1).
    public mutating func opened(_ id: ConnectionID, now: Instant) -> [EngineAction] {
        let session = SessionInfo(id: id, stage: .awaitingLogin, subscription: .none, openedAt: now, lastInboundAt: now)
        sessions[id] = session
        return [.scheduleHeartbeat(id, at: nextCheck(session))]
    }

    /// Any frame arrived (data, ping or pong): the connection is alive, and so is its user. O(1).
    public mutating func activity(_ id: ConnectionID, now: Instant) {
        guard let index = sessions.index(forKey: id),
              let uid = sessions.values[index].noteInbound(at: now, isPing: false) else { return }
        lastActiveAt[uid] = now.seconds
    }

    /// A text frame was decoded (or refused) by ``RequestDecoder``.
    ///
    /// `ping` and `users.get` are O(1); `login` and `logout` are O(recipients) when
    /// they change the user's presence (plus O(r log r) to merge the candidates when
    /// friend or role subscribers are among them) and O(1) otherwise, whatever the
    /// number of sessions, users or the user's devices; `users.list` is O(users) from
    /// its cursor.
    public mutating func received(_ decoded: Result<RequestEnvelope, RequestRejection>, from id: ConnectionID,
                                  now: Instant) -> [EngineAction] {
        guard let session = sessions[id] else { return [] }
        let envelope: RequestEnvelope
        switch decoded {
        case .failure(let rejection): return [.send([id], .error(id: rejection.id, rejection.error))]
        case .success(let decoded): envelope = decoded
        }
        if case .login(let login) = envelope.request {
            guard session.stage == .awaitingLogin, cluster?.pendingLogins[id] == nil else {
                return [.send([id], .error(id: envelope.id, ChatError(.alreadyLoggedIn)))]
            }
            return self.login(login, id: envelope.id, on: id, now: now)
        }
        guard session.stage == .loggedIn, let uid = session.uid else {
            return [.send([id], .error(id: envelope.id, ChatError(.notLoggedIn)))]
        }
        switch envelope.request {
        case .login:
            return []
        case .ping:
            sessions[id]?.lastPingAt = now
            return [.send([id], .pong(id: envelope.id, serverTime: now.seconds))]
        case .logout:
            return [.send([id], .result(id: envelope.id, JSONObject()))] + end(id, code: .normal, reason: "logged out", now: now)
        case .getUser(let target):
            guard let user = user(target, viewer: uid) else {
                return [.send([id], .error(id: envelope.id, ChatError(.uidNotFound)))]
            }
            return [.send([id], .user(id: envelope.id, user))]
        case .listUsers(let query):
            return [.send([id], listUsers(query, viewer: uid, id: envelope.id))]
        }
    }

    /// A `ping` arrived on `id`: what ``activity(_:now:)`` and ``received(_:from:now:)``
    /// do for it, with one lookup and no actions. True when the connection is logged in
    /// and gets ``ServerMessage/pong(id:serverTime:)`` with `now`; false, with nothing
    /// changed, when the caller must take the general path (which refuses it). O(1).
    public mutating func pinged(_ id: ConnectionID, now: Instant) -> Bool {
        guard let index = sessions.index(forKey: id),
              let uid = sessions.values[index].noteInbound(at: now, isPing: true) else { return false }
        lastActiveAt[uid] = now.seconds
        return true
    }

    /// The transport reports the connection gone (closed, reset, failed).
    /// O(recipients) when the user goes offline, O(1) otherwise.
    public mutating func closed(_ id: ConnectionID, now: Instant) -> [EngineAction] {
        forget(id, now: now)
    }

    /// A heartbeat check scheduled with ``EngineAction/scheduleHeartbeat(_:at:)`` is due.
    /// O(1), or O(recipients) when it ends the user's last connection.
    public mutating func heartbeatDue(_ id: ConnectionID, now: Instant) -> [EngineAction] {
        guard let session = sessions[id] else { return [] }
        if session.stage == .awaitingLogin, session.openedAt.advanced(by: settings.loginTimeoutMilliseconds) <= now {
            return end(id, code: .loginTimeout, reason: "no login within the login timeout", now: now)
        }
        let deadline = nextCheck(session)
        guard deadline <= now else { return [.scheduleHeartbeat(id, at: deadline)] }
        return end(id, code: .heartbeatTimeout, reason: "no frame within the heartbeat timeout", now: now)
    }

    /// When the session's next heartbeat or login deadline falls.
    private func nextCheck(_ session: SessionInfo) -> Instant {
        let heartbeat = session.lastInboundAt.advanced(by: settings.heartbeatTimeoutMilliseconds)
        guard session.stage == .awaitingLogin else { return heartbeat }
        return min(heartbeat, session.openedAt.advanced(by: settings.loginTimeoutMilliseconds))
    }

    /// Closes a connection on request of the control API. Costs what ``closed(_:now:)`` does.
    public mutating func disconnect(_ id: ConnectionID, code: CloseCode, reason: String, now: Instant) -> [EngineAction] {
        guard sessions[id] != nil else { return [] }
        return end(id, code: code, reason: reason, now: now)
    }

    /// Replaces users and settings; every connection is closed with `code`.
    /// O(sessions × recipients) at worst: every user goes offline.
    public mutating func load(directory: UserDirectory, settings: AppConfiguration, closing code: CloseCode,
                              now: Instant) -> [EngineAction] {
        var actions: [EngineAction] = []
        for id in sessions.keys.sorted() { actions += end(id, code: code, reason: "server state reset", now: now) }
        self.directory = directory
        self.settings = settings
        lastActiveAt = [:]
        loadedAt = now.seconds
        return actions
    }

    mutating func setLastActive(_ uid: String, _ seconds: Double) { lastActiveAt[uid] = seconds }

    // MARK: Login and device policy

    private mutating func login(_ login: LoginRequest, id requestID: RequestID, on id: ConnectionID,
                                now: Instant) -> [EngineAction] {
        let uid: String
        if let token = login.token {
            guard let owner = directory.uid(forToken: token), login.uid == nil || login.uid == owner else {
                return refuse(id, requestID, .authFailed, now: now)
            }
            uid = owner
        } else {
            guard login.authKey == settings.authKey else { return refuse(id, requestID, .authFailed, now: now) }
            guard let claimed = login.uid, directory.record(claimed) != nil else {
                return refuse(id, requestID, .uidNotFound, now: now)
            }
            uid = claimed
        }
        guard let record = directory.record(uid) else { return refuse(id, requestID, .uidNotFound, now: now) }
        guard record.deactivatedAt == 0 else { return refuse(id, requestID, .userDeactivated, now: now) }

        let policy = DevicePolicy(settings)
        let request = DevicePolicy.Login(login)
        guard case .admitted(let displaced) = cluster == nil
                ? policy.decide(request, holders: localHolders(of: uid, deviceId: login.deviceId))
                : clusterDecision(request, policy: policy, uid: uid) else {
            return refuse(id, requestID, .reconnectKickRefused, close: .reconnectRefused, now: now)
        }
        guard let cluster else {
            return completeLogin(login, requestID, on: id, uid: uid, displacing: displaced, now: now)
        }
        let device = ClusterDevice(uid: uid, node: cluster.node, connection: id.description, deviceId: login.deviceId,
                                   platform: login.platform, since: now.seconds)
        let claim = DeviceClaim(policy, request)
        if claim.refusesToKick {
            // Another node may be claiming the user's mobile slot at this moment: the
            // reply waits for Redis's answer (clusterClaimAnswered).
            self.cluster?.pendingLogins[id] = PendingLogin(login: login, requestID: requestID, device: device,
                                                           displaced: displaced)
            return [.claimDevice(device, claim)]
        }
        // The claim follows the local kicks' retractions, so Redis sees them first.
        return completeLogin(login, requestID, on: id, uid: uid, displacing: displaced, now: now)
            + [.claimDevice(device, claim)]
    }

    /// The logged-in connections of `uid` the device policy weighs: one per device id,
    /// and the mobiles. O(the user's devices).
    func connectionIDs(of uid: String) -> [ConnectionID] {
        guard let user = connectionsByUser[uid] else { return [] }
        return Set(user.byDevice.values).union(user.mobiles).sorted()
    }

    /// What the device policy weighs on one node: the user's connection on the same
    /// device and its mobile connections, in order of login. O(the user's mobiles).
    private func localHolders(of uid: String, deviceId: String) -> [DevicePolicy.Holder<ConnectionID>] {
        guard let user = connectionsByUser[uid] else { return [] }
        var holders = user.mobiles.map { DevicePolicy.Holder($0, deviceId: sessions[$0]?.deviceId ?? "", platform: .mobile) }
        if let same = user.byDevice[deviceId], !user.mobiles.contains(same), let platform = sessions[same]?.platform {
            holders.append(DevicePolicy.Holder(same, deviceId: deviceId, platform: platform))
        }
        return holders
    }

    /// An error reply to a login, then the close (`close`, 4000 by default).
    mutating func refuse(_ id: ConnectionID, _ requestID: RequestID, _ code: ErrorCode, close: CloseCode = .loginFailed,
                         now: Instant) -> [EngineAction] {
        [.send([id], .error(id: requestID, ChatError(code)))] + end(id, code: close, reason: code.rawValue, now: now)
    }

    /// Logs `id` in as `uid`, kicking `displaced` (this node's devices the policy displaced).
    mutating func completeLogin(_ login: LoginRequest, _ requestID: RequestID, on id: ConnectionID, uid: String,
                                displacing displaced: [DevicePolicy.Displacement<ConnectionID>],
                                now: Instant) -> [EngineAction] {
        var actions: [EngineAction] = []
        // The newcomer is registered before the old devices go, so the user never
        // appears offline in between.
        let wasOnline = connectionsByUser[uid] != nil
        sessions[id]?.stage = .loggedIn
        sessions[id]?.uid = uid
        sessions[id]?.deviceId = login.deviceId
        sessions[id]?.platform = login.platform
        sessions[id]?.subscription = login.presence
        sessions[id]?.loggedInAt = now
        register(id, uid: uid, deviceId: login.deviceId, platform: login.platform, subscription: login.presence)
        lastActiveAt[uid] = now.seconds
        for displacement in displaced.sorted(by: { $0.id < $1.id }) where sessions[displacement.id] != nil {
            let old = displacement.id, reason = displacement.reason.rawValue
            actions.append(.send([old], .deviceKicked(reason: reason, byDeviceId: login.deviceId, byPlatform: login.platform)))
            actions += end(old, code: .deviceKicked, reason: reason, now: now)
        }
        actions.append(.send([id], .loggedIn(id: requestID, user: user(uid, viewer: uid)!, connectionId: id.description,
                                             serverTime: now.seconds)))
        if cluster == nil && !wasOnline {
            actions += presenceChanged(uid)
        }
        return actions
    }

    // MARK: Presence

    /// Closes `id` and forgets its session, with the presence consequences.
    private mutating func end(_ id: ConnectionID, code: CloseCode, reason: String, now: Instant) -> [EngineAction] {
        forget(id, closing: ConnectionClose(id, code, reason: reason), now: now)
    }

    /// Forgets the session of `id`, with the presence consequences; `closing` is the
    /// server's close when the server ends the connection. In cluster mode the device's
    /// retraction carries that close instead of a `close` action.
    private mutating func forget(_ id: ConnectionID, closing: ConnectionClose? = nil, now: Instant) -> [EngineAction] {
        guard let session = sessions.removeValue(forKey: id) else { return [] }
        let close = closing.map { [EngineAction.close($0.connection, $0.code, reason: $0.reason)] } ?? []
        guard session.stage == .loggedIn, let uid = session.uid, var remaining = connectionsByUser[uid] else { return close }
        unsubscribe(id, uid: uid, subscription: session.subscription)
        remaining.count -= 1
        if let deviceId = session.deviceId, remaining.byDevice[deviceId] == id { remaining.byDevice[deviceId] = nil }
        if session.platform == .mobile { remaining.mobiles.removeAll { $0 == id } }
        if let cluster, let platform = session.platform {
            connectionsByUser[uid] = remaining.count == 0 ? nil : remaining
            lastActiveAt[uid] = now.seconds
            let device = ClusterDevice(uid: uid, node: cluster.node, connection: id.description,
                                       deviceId: session.deviceId ?? "", platform: platform,
                                       since: session.loggedInAt?.seconds ?? now.seconds)
            return [.retractDevice(device, lastActiveAt: now.seconds, thenClose: closing)]
        }
        guard remaining.count == 0 else {
            connectionsByUser[uid] = remaining
            return close
        }
        connectionsByUser[uid] = nil
        lastActiveAt[uid] = now.seconds
        return close + presenceChanged(uid)
    }

    /// Adds a logged-in connection to the per-user and per-subscription indexes. O(log n).
    private mutating func register(_ id: ConnectionID, uid: String, deviceId: String, platform: Platform,
                                   subscription: PresenceSubscription) {
        var user = connectionsByUser[uid] ?? UserConnections()
        user.count += 1
        user.byDevice[deviceId] = id
        if platform == .mobile { user.mobiles.append(id) }
        connectionsByUser[uid] = user
        switch subscription {
        case .allUsers: allSubscribers.insert(id)
        case .friends: friendSubscribers[uid, default: ConnectionSet()].insert(id)
        case .roles(let roles): for role in roles { roleSubscribers[role, default: ConnectionSet()].insert(id) }
        case .none: break
        }
    }

    private mutating func unsubscribe(_ id: ConnectionID, uid: String, subscription: PresenceSubscription) {
        func remove(_ id: ConnectionID, from sets: inout [String: ConnectionSet], key: String) {
            sets[key]?.remove(id)
            if sets[key]?.isEmpty == true { sets[key] = nil }
        }
        switch subscription {
        case .allUsers: allSubscribers.remove(id)
        case .friends: remove(id, from: &friendSubscribers, key: uid)
        case .roles(let roles): for role in roles { remove(id, from: &roleSubscribers, key: role) }
        case .none: break
        }
    }

    /// Logged-in connections whose subscription covers `record`, in order of arrival
    /// (the user's own among them). O(r), or O(r log r) when friend or role
    /// subscribers are merged in.
    func subscribers(of record: UserRecord) -> [ConnectionID] {
        var lists: [[ConnectionID]] = []
        if !allSubscribers.isEmpty { lists.append(allSubscribers.ids) }
        if let role = record.role, let set = roleSubscribers[role] { lists.append(set.ids) }
        for friend in directory.friends(of: record.uid) where friend != record.uid {
            if let set = friendSubscribers[friend] { lists.append(set.ids) }
        }
        if lists.count <= 1 { return lists.first ?? [] }
        // The sets are disjoint: a connection has one subscription, a user one role.
        return lists.joined().sorted()
    }

    /// `user.online` or `user.offline` for `uid` to every subscriber, grouped so that
    /// viewers who see the same object share one encoded frame. O(recipients).
    func presenceChanged(_ uid: String, online: Bool? = nil) -> [EngineAction] {
        guard let record = directory.record(uid), let base = user(uid, viewer: nil) else { return [] }
        // Group index: 1 when `uid` has blocked the viewer, + 2 when the viewer has blocked `uid`.
        var groups = [[ConnectionID]](repeating: [], count: 4)
        var order: [Int] = []
        // Nobody blocked on either side (the common case): one group, no lookups per viewer.
        let noBlocks = record.blocked.isEmpty && !directory.isBlockedByAnyone(uid)
        for id in subscribers(of: record) {
            guard let viewerUID = sessions[id]?.uid, viewerUID != uid else { continue }
            if noBlocks {
                if groups[0].isEmpty { order.append(0) }
                groups[0].append(id)
                continue
            }
            let key = (record.blocked.contains(viewerUID) ? 1 : 0) | (directory.hasBlocked(viewerUID, uid) ? 2 : 0)
            if groups[key].isEmpty { order.append(key) }
            groups[key].append(id)
        }
        let online = online ?? isOnline(uid)
        return order.map { key in
            var user = base
            user.hasBlockedMe = key & 1 != 0
            user.blockedByMe = key & 2 != 0
            return .send(groups[key], online ? .userOnline(user) : .userOffline(user))
        }
    }

    // MARK: Queries

    private func listUsers(_ query: UserListQuery, viewer: String, id: RequestID) -> ServerMessage {
        var start = directory.records.startIndex
        if let cursor = query.cursor {
            guard cursor.hasPrefix("after:") else { return .error(id: id, ChatError(.invalidCursor)) }
            let after = String(cursor.dropFirst("after:".count))
            start = directory.records.firstIndex { $0.uid > after } ?? directory.records.endIndex
        }
        var page: [User] = []
        var index = start
        while index < directory.records.endIndex, page.count < query.limit {
            let uid = directory.records[index].uid
            if let user = user(uid, viewer: viewer), query.status == nil || user.status == query.status {
                page.append(user)
            }
            index += 1
        }
        let more = directory.records[index...].contains { query.status == nil || isOnline($0.uid) == (query.status == .online) }
        return .users(id: id, page, next: more ? page.last.map { "after:\($0.uid)" } : nil)
    }
}
