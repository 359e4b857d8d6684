import ChatProtocol
import EventLoop
import MockChatServer
import Testing

/// Drives the pure engine with the embedded fixtures and requests decoded the way the
/// server decodes them. No sockets, no loop: `now` is whatever the test says.
final class EngineHarness {
    var engine: PresenceEngine
    var now = Instant.virtualEpoch
    private var nextRequest: Int64 = 1

    init(configure: (inout AppConfiguration) -> Void = { _ in }) throws {
        let fixtures = try FixtureSet.embedded()
        var settings = fixtures.settings
        configure(&settings)
        engine = PresenceEngine(directory: fixtures.directory, settings: settings)
    }

    static func c(_ number: Int) -> ConnectionID { ConnectionID(number) }

    @discardableResult
    func open(_ number: Int) -> [EngineAction] {
        engine.opened(ConnectionID(number), now: now)
    }

    /// Decodes `fields` plus a fresh id and `op` as the server would, then feeds the engine.
    func send(_ number: Int, _ op: String, _ fields: KeyValuePairs<String, JSONValue> = [:])
        -> (id: RequestID, actions: [EngineAction]) {
        let id = RequestID.integer(nextRequest)
        nextRequest += 1
        var object = JSONObject([("id", id.json), ("op", .string(op))])
        for (key, value) in fields { object[key] = value }
        return (id, sendJSON(number, .object(object)))
    }

    func sendJSON(_ number: Int, _ value: JSONValue) -> [EngineAction] {
        engine.activity(ConnectionID(number), now: now)
        return engine.received(RequestDecoder.decode(value), from: ConnectionID(number), now: now)
    }

    func login(_ number: Int, _ uid: String, device: String, platform: Platform = .desktop,
               presence: PresenceSubscription = .allUsers, reconnect: Bool = false,
               reconnectKickEnable: Bool = false, authKey: String = "mockchat-dev-key")
        -> (id: RequestID, actions: [EngineAction]) {
        send(number, "login", ["uid": .string(uid), "authKey": .string(authKey), "deviceId": .string(device),
                               "platform": .string(platform.rawValue), "presence": presence.json,
                               "reconnect": .bool(reconnect), "reconnectKickEnable": .bool(reconnectKickEnable)])
    }

    /// Opens connection `number` and logs it in; the actions must start with a success reply.
    @discardableResult
    func online(_ number: Int, _ uid: String, device: String? = nil, platform: Platform = .desktop,
                presence: PresenceSubscription = .allUsers) -> [EngineAction] {
        open(number)
        let (id, actions) = login(number, uid, device: device ?? "\(uid)-\(number)", platform: platform,
                                  presence: presence)
        #expect(actions.contains(loginReply(number, uid, id: id)), "login of \(uid) on c\(number) failed: \(actions)")
        return actions
    }

    /// The exact successful login reply for `uid` on connection `number` at `now`.
    func loginReply(_ number: Int, _ uid: String, id: RequestID) -> EngineAction {
        .send([ConnectionID(number)], .loggedIn(id: id, user: engine.user(uid, viewer: uid)!,
                                                connectionId: "c\(number)", serverTime: now.seconds))
    }

    /// `uid` as the presence events describe it, with the given block flags.
    func presenceUser(_ uid: String, hasBlockedMe: Bool = false, blockedByMe: Bool = false) -> User {
        var user = engine.user(uid, viewer: nil)!
        user.hasBlockedMe = hasBlockedMe
        user.blockedByMe = blockedByMe
        return user
    }

    func advance(milliseconds: Int64) { now = now.advanced(by: milliseconds) }
}

private func c(_ number: Int) -> ConnectionID { ConnectionID(number) }

@Suite struct PresenceEngineTests {
    // MARK: Login and presence

    @Test func loginRepliesThenAnnouncesOnlineToSubscribersOnly() throws {
        let h = try EngineHarness()
        h.online(1, "bob", presence: .allUsers)  // a subscriber
        h.online(2, "erin", presence: .none)  // not subscribed
        h.open(3)  // not logged in: gets nothing
        h.advance(milliseconds: 1_500)
        h.open(4)
        let (id, actions) = h.login(4, "alice", device: "laptop", platform: .desktop, presence: .allUsers)
        let t = h.now.seconds
        let alice = User(uid: "alice", name: "Alice Martin", avatar: "https://avatars.mockchat.test/alice.png",
                         link: "https://profiles.mockchat.test/alice", role: "admin", status: .online,
                         statusMessage: "Shipping the release", lastActiveAt: t, hasBlockedMe: false,
                         blockedByMe: false, deactivatedAt: 0, tags: ["beta", "staff"],
                         metadata: ["team": "core", "timezone": "Europe/Paris"])
        #expect(actions == [
            .send([c(4)], .loggedIn(id: id, user: alice, connectionId: "c4", serverTime: t)),
            .send([c(1)], .userOnline(alice)),
        ])
        #expect(h.engine.onlineUsers == ["alice", "bob", "erin"])
        #expect(h.engine.session(c(4))?.stage == .loggedIn)
        #expect(h.engine.session(c(3))?.stage == .awaitingLogin)
    }

    @Test func tokenLoginIdentifiesTheUser() throws {
        let h = try EngineHarness()
        h.open(1)
        let (id, actions) = h.send(1, "login", ["token": "dave-token", "deviceId": "d1", "platform": "web"])
        #expect(actions == [h.loginReply(1, "dave", id: id)])
        h.open(2)
        let wrong = h.send(2, "login", ["uid": "alice", "token": "dave-token", "deviceId": "d2"])
        #expect(wrong.actions == [
            .send([c(2)], .error(id: wrong.id, ChatError(.authFailed))),
            .close(c(2), .loginFailed, reason: "ERR_AUTH_FAILED"),
        ])
    }

    @Test func secondDeviceOfAnOnlineUserCausesNoSecondOnlineEvent() throws {
        let h = try EngineHarness()
        h.online(1, "bob")
        h.online(2, "alice", device: "laptop")
        h.advance(milliseconds: 10)
        h.open(3)
        let (id, actions) = h.login(3, "alice", device: "browser", platform: .web)
        #expect(actions == [h.loginReply(3, "alice", id: id)])
        #expect(h.engine.onlineUsers == ["alice", "bob"])
    }

    @Test func lastConnectionClosingSendsExactlyOneOfflineWithLastActiveAtNow() throws {
        let h = try EngineHarness()
        h.online(1, "bob")
        h.online(2, "alice", device: "laptop")
        h.online(3, "alice", device: "browser", platform: .web)
        h.advance(milliseconds: 4_250)
        #expect(h.engine.closed(c(2), now: h.now) == [])
        #expect(h.engine.isOnline("alice"))
        h.advance(milliseconds: 750)
        let closedAt = h.now
        let actions = h.engine.closed(c(3), now: closedAt)
        var offline = h.presenceUser("alice")
        #expect(offline.status == .offline)
        #expect(offline.lastActiveAt == closedAt.seconds)
        offline.lastActiveAt = closedAt.seconds
        #expect(actions == [.send([c(1)], .userOffline(offline))])
        // A second report of the same loss changes nothing.
        #expect(h.engine.closed(c(3), now: closedAt) == [])
        #expect(!h.engine.isOnline("alice"))
        #expect(h.engine.user("alice", viewer: "bob")?.lastActiveAt == closedAt.seconds)
    }

    @Test func logoutRepliesClosesWith1000AndAnnouncesOffline() throws {
        let h = try EngineHarness()
        h.online(1, "bob")
        h.online(2, "alice")
        h.advance(milliseconds: 2_000)
        let (id, actions) = h.send(2, "logout")
        #expect(actions == [
            .send([c(2)], .result(id: id, JSONObject())),
            .close(c(2), .normal, reason: "logged out"),
            .send([c(1)], .userOffline(h.presenceUser("alice"))),
        ])
        #expect(h.engine.user("alice", viewer: nil)?.lastActiveAt == h.now.seconds)
    }

    // MARK: Subscriptions

    @Test func subscriptionAllSeesEveryoneButItself() throws {
        let h = try EngineHarness()
        h.online(1, "peggy", presence: .allUsers)
        h.open(2)
        let (id, actions) = h.login(2, "erin", device: "e")
        #expect(actions == [h.loginReply(2, "erin", id: id), .send([c(1)], .userOnline(h.presenceUser("erin")))])
    }

    @Test func subscriptionFriendsSeesFriendsInBothDirections() throws {
        let h = try EngineHarness()
        h.online(1, "alice", presence: .friends)  // friends: bob, carol, dave
        h.online(2, "erin", presence: .friends)  // friend: bob (listed by both)
        h.online(3, "frank", presence: .friends)  // dave lists frank and frank lists dave
        h.open(4)
        let bob = h.login(4, "bob", device: "b", presence: .none)
        #expect(bob.actions == [h.loginReply(4, "bob", id: bob.id),
                                .send([c(1), c(2)], .userOnline(h.presenceUser("bob")))])
        h.open(5)
        let grace = h.login(5, "grace", device: "g", presence: .none)  // nobody's friend
        #expect(grace.actions == [h.loginReply(5, "grace", id: grace.id)])
        h.open(6)
        let dave = h.login(6, "dave", device: "d", presence: .none)
        #expect(dave.actions == [h.loginReply(6, "dave", id: dave.id),
                                 .send([c(1), c(3)], .userOnline(h.presenceUser("dave")))])
    }

    @Test func subscriptionRolesSeesOnlyThoseRoles() throws {
        let h = try EngineHarness()
        h.online(1, "peggy", presence: .roles(["admin", "support"]))
        h.online(2, "trent", presence: .roles([]))
        for (number, uid, expected) in [(3, "alice", true), (4, "bob", false), (5, "judy", true),
                                        (6, "carol", false), (7, "grace", true)] {
            h.open(number)
            let (id, actions) = h.login(number, uid, device: uid, presence: .none)
            let events: [EngineAction] = expected ? [.send([c(1)], .userOnline(h.presenceUser(uid)))] : []
            #expect(actions == [h.loginReply(number, uid, id: id)] + events, "login of \(uid)")
        }
    }

    /// One connection's watched users, as a view with a limit asks for them, are its entry
    /// of the whole `watching()` table: every subscription kind, a user watching from two
    /// devices, a user with none, one who watches nobody and a connection not logged in.
    @Test func oneConnectionsWatchingIsItsEntryOfTheWholeTable() throws {
        let h = try EngineHarness()
        h.online(1, "carol", presence: .roles(["admin"]))
        h.online(2, "bob", presence: .friends)
        h.online(3, "erin", presence: .allUsers)
        h.online(4, "dave", presence: .friends)
        h.online(5, "grace", presence: .roles(["admin", "support"]))
        h.online(6, "alice", presence: .none)
        h.online(7, "erin", presence: .friends)
        h.online(8, "frank", presence: .friends)
        h.online(9, "trent", presence: .roles([]))
        h.open(10)
        let online = h.engine.onlineUsers
        let whole = h.engine.watching()
        #expect(whole[c(3)]?.count == online.count - 1)
        #expect(whole[c(1)] == ["alice", "grace"] && whole[c(7)] == ["bob"] && whole[c(6)] == nil && whole[c(9)] == nil)
        for number in 1...10 {
            #expect(h.engine.watching(c(number), among: online) == whole[c(number)] ?? [], "c\(number)")
        }
    }

    @Test func mixedSubscriptionsGetOneEventInOrderOfArrivalAndStopAtClose() throws {
        let h = try EngineHarness()
        h.online(1, "carol", presence: .roles(["admin"]))  // alice is an admin
        h.online(2, "bob", presence: .friends)  // bob and alice are friends
        h.online(3, "erin", presence: .allUsers)
        h.online(4, "dave", presence: .friends)  // alice lists dave
        h.online(5, "grace", presence: .roles(["admin", "admin"]))  // a role named twice
        h.open(6)
        let first = h.login(6, "alice", device: "a", presence: .none)
        #expect(first.actions == [h.loginReply(6, "alice", id: first.id),
                                  .send([c(1), c(2), c(3), c(4), c(5)], .userOnline(h.presenceUser("alice")))])
        _ = h.engine.closed(c(6), now: h.now)
        _ = h.engine.closed(c(2), now: h.now)
        _ = h.engine.closed(c(5), now: h.now)
        h.open(7)
        let second = h.login(7, "alice", device: "a", presence: .none)
        #expect(second.actions == [h.loginReply(7, "alice", id: second.id),
                                   .send([c(1), c(3), c(4)], .userOnline(h.presenceUser("alice")))])
    }

    @Test func subscriptionNoneSeesNothing() throws {
        let h = try EngineHarness()
        h.online(1, "alice", presence: .none)
        h.open(2)
        let bob = h.login(2, "bob", device: "b")
        #expect(bob.actions == [h.loginReply(2, "bob", id: bob.id)])
        #expect(h.engine.closed(c(2), now: h.now) == [])
    }

    @Test func blockedFlagsArePerViewer() throws {
        let h = try EngineHarness()
        h.online(1, "carol", presence: .allUsers)  // carol blocked mallory
        h.online(2, "bob", presence: .allUsers)
        h.online(3, "dave", presence: .allUsers)
        h.open(4)
        let mallory = h.login(4, "mallory", device: "m", presence: .allUsers)
        #expect(mallory.actions == [
            h.loginReply(4, "mallory", id: mallory.id),
            .send([c(1)], .userOnline(h.presenceUser("mallory", hasBlockedMe: false, blockedByMe: true))),
            .send([c(2), c(3)], .userOnline(h.presenceUser("mallory"))),
        ])
        // The other direction: mallory watching carol come back online.
        _ = h.engine.closed(c(1), now: h.now)
        h.open(5)
        let carol = h.login(5, "carol", device: "c2")
        #expect(carol.actions == [
            h.loginReply(5, "carol", id: carol.id),
            .send([c(2), c(3)], .userOnline(h.presenceUser("carol"))),
            .send([c(4)], .userOnline(h.presenceUser("carol", hasBlockedMe: true, blockedByMe: false))),
        ])
        #expect(h.engine.user("carol", viewer: "mallory")?.hasBlockedMe == true)
        #expect(h.engine.user("mallory", viewer: "carol")?.blockedByMe == true)
        #expect(h.engine.user("mallory", viewer: "bob")?.blockedByMe == false)
    }

    // MARK: Device policy

    @Test func newMobileKicksTheOlderMobileWithoutPresenceChange() throws {
        let h = try EngineHarness()
        h.online(1, "alice", presence: .allUsers)
        h.online(2, "bob", device: "phone-1", platform: .mobile)
        h.advance(milliseconds: 100)
        h.open(3)
        let (id, actions) = h.login(3, "bob", device: "phone-2", platform: .mobile)
        let reason = "another mobile device logged in"
        #expect(actions == [
            .send([c(2)], .deviceKicked(reason: reason, byDeviceId: "phone-2", byPlatform: .mobile)),
            .close(c(2), .deviceKicked, reason: reason),
            h.loginReply(3, "bob", id: id),
        ])
        #expect(h.engine.session(c(2)) == nil)
        #expect(h.engine.isOnline("bob"))
        // The kicked socket's transport close is then reported: nothing more happens.
        #expect(h.engine.closed(c(2), now: h.now) == [])
    }

    @Test func sameDeviceLoggingInAgainReplacesItsOldConnection() throws {
        let h = try EngineHarness()
        h.online(1, "alice", presence: .allUsers)
        h.online(2, "bob", device: "laptop", platform: .desktop)
        h.open(3)
        let (id, actions) = h.login(3, "bob", device: "laptop", platform: .desktop)
        let reason = "the same device connected again"
        #expect(actions == [
            .send([c(2)], .deviceKicked(reason: reason, byDeviceId: "laptop", byPlatform: .desktop)),
            .close(c(2), .deviceKicked, reason: reason),
            h.loginReply(3, "bob", id: id),
        ])
    }

    @Test func mobileDoesNotKickDesktopOrWeb() throws {
        let h = try EngineHarness()
        h.online(1, "bob", device: "laptop", platform: .desktop)
        h.online(2, "bob", device: "browser", platform: .web)
        h.open(3)
        let (id, actions) = h.login(3, "bob", device: "phone", platform: .mobile)
        #expect(actions == [h.loginReply(3, "bob", id: id)])
        h.open(4)
        let desktop = h.login(4, "bob", device: "laptop-2", platform: .desktop)
        #expect(desktop.actions == [h.loginReply(4, "bob", id: desktop.id)])
        #expect(h.engine.connections.map(\.id) == [c(1), c(2), c(3), c(4)])
    }

    @Test func reconnectKickEnableRefusesTheNewcomerWhenTheAppAllowsIt() throws {
        let h = try EngineHarness { $0.clientKickControl = true }
        h.online(1, "alice", presence: .allUsers)
        h.online(2, "bob", device: "phone-1", platform: .mobile)
        h.open(3)
        let (id, actions) = h.login(3, "bob", device: "phone-2", platform: .mobile, reconnect: true,
                                    reconnectKickEnable: true)
        #expect(actions == [
            .send([c(3)], .error(id: id, ChatError(.reconnectKickRefused))),
            .close(c(3), .reconnectRefused, reason: "ERR_RECONNECT_KICK_REFUSED"),
        ])
        #expect(h.engine.session(c(2))?.stage == .loggedIn)
        #expect(h.engine.session(c(3)) == nil)
        // Without `reconnect` the flag does not apply: the old phone is kicked.
        h.open(4)
        let fresh = h.login(4, "bob", device: "phone-3", platform: .mobile, reconnectKickEnable: true)
        #expect(fresh.actions.first == .send([c(2)], .deviceKicked(reason: "another mobile device logged in",
                                                                   byDeviceId: "phone-3", byPlatform: .mobile)))
        #expect(fresh.actions.last == h.loginReply(4, "bob", id: fresh.id))
    }

    @Test func reconnectKickEnableIsIgnoredWhenTheAppSwitchIsOff() throws {
        let h = try EngineHarness()  // clientKickControl is false in app.json
        #expect(h.engine.settings.clientKickControl == false)
        h.online(2, "bob", device: "phone-1", platform: .mobile)
        h.open(3)
        let (id, actions) = h.login(3, "bob", device: "phone-2", platform: .mobile, reconnect: true,
                                    reconnectKickEnable: true)
        let reason = "another mobile device logged in"
        #expect(actions == [
            .send([c(2)], .deviceKicked(reason: reason, byDeviceId: "phone-2", byPlatform: .mobile)),
            .close(c(2), .deviceKicked, reason: reason),
            h.loginReply(3, "bob", id: id),
        ])
    }

    // MARK: Heartbeat

    @Test func heartbeatClosesExactlyAtTheDeadlineAfterTheLastFrame() throws {
        let h = try EngineHarness()
        let t0 = h.now
        // Before login the first check is the login deadline (+10 s).
        #expect(h.open(1) == [.scheduleHeartbeat(c(1), at: t0.advanced(by: 10_000))])
        _ = h.login(1, "alice", device: "a")
        h.online(2, "bob")
        // A frame at +10 s moves the deadline to +40 s.
        h.advance(milliseconds: 10_000)
        h.engine.activity(c(1), now: h.now)
        #expect(h.engine.heartbeatDue(c(1), now: t0.advanced(by: 30_000))
            == [.scheduleHeartbeat(c(1), at: t0.advanced(by: 40_000))])
        #expect(h.engine.heartbeatDue(c(1), now: t0.advanced(by: 39_999))
            == [.scheduleHeartbeat(c(1), at: t0.advanced(by: 40_000))])
        let deadline = t0.advanced(by: 40_000)
        let actions = h.engine.heartbeatDue(c(1), now: deadline)
        var offline = h.presenceUser("alice")
        offline.lastActiveAt = deadline.seconds
        #expect(actions == [
            .close(c(1), .heartbeatTimeout, reason: "no frame within the heartbeat timeout"),
            .send([c(2)], .userOffline(offline)),
        ])
        #expect(h.engine.heartbeatDue(c(1), now: deadline) == [])
    }

    @Test func heartbeatFollowsTheAppSetting() throws {
        let h = try EngineHarness { $0.heartbeatTimeoutMilliseconds = 5_000 }
        #expect(h.open(1) == [.scheduleHeartbeat(c(1), at: h.now.advanced(by: 5_000))])
        #expect(h.engine.heartbeatDue(c(1), now: h.now.advanced(by: 5_000))
            == [.close(c(1), .heartbeatTimeout, reason: "no frame within the heartbeat timeout")])
    }

    // MARK: Login failures and request order

    @Test(arguments: [
        ("nobody", "mockchat-dev-key", ErrorCode.uidNotFound),
        ("alice", "wrong-key", ErrorCode.authFailed),
        ("oscar", "mockchat-dev-key", ErrorCode.userDeactivated),
    ])
    func refusedLoginSendsAnErrorAndCloses4003(uid: String, key: String, code: ErrorCode) throws {
        let h = try EngineHarness()
        h.online(1, "bob")
        h.open(2)
        let (id, actions) = h.login(2, uid, device: "x", authKey: key)
        #expect(actions == [
            .send([c(2)], .error(id: id, ChatError(code))),
            .close(c(2), .loginFailed, reason: code.rawValue),
        ])
        #expect(h.engine.session(c(2)) == nil)
        #expect(h.engine.onlineUsers == ["bob"])
    }

    @Test func requestsBeforeLoginAreRefusedWithoutClosing() throws {
        let h = try EngineHarness()
        h.open(1)
        for op in ["ping", "users.list", "logout"] {
            let (id, actions) = h.send(1, op)
            #expect(actions == [.send([c(1)], .error(id: id, ChatError(.notLoggedIn)))], "\(op)")
        }
        let get = h.send(1, "users.get", ["uid": "bob"])
        #expect(get.actions == [.send([c(1)], .error(id: get.id, ChatError(.notLoggedIn)))])
        #expect(h.engine.session(c(1))?.stage == .awaitingLogin)
    }

    @Test func secondLoginOnOneConnectionIsRefused() throws {
        let h = try EngineHarness()
        h.online(1, "alice")
        let (id, actions) = h.login(1, "bob", device: "b")
        #expect(actions == [.send([c(1)], .error(id: id, ChatError(.alreadyLoggedIn)))])
        #expect(h.engine.session(c(1))?.uid == "alice")
        #expect(!h.engine.isOnline("bob"))
    }

    @Test func malformedRequestsGetBadRequestWithTheirIdWhenReadable() throws {
        let h = try EngineHarness()
        h.online(1, "alice")
        #expect(h.sendJSON(1, ["op": "ping"]).first?.badRequestID == .some(nil))
        #expect(h.sendJSON(1, [1, 2]).first?.badRequestID == .some(nil))
        let unknown = h.send(1, "teleport")
        #expect(unknown.actions == [.send([c(1)], .error(id: unknown.id, ChatError(.unknownOp, "Unknown operation 'teleport'")))])
        let ping = h.send(1, "ping")
        #expect(ping.actions == [.send([c(1)], .pong(id: ping.id, serverTime: h.now.seconds))])
        #expect(h.engine.session(c(1))?.lastPingAt == h.now)
    }

    // MARK: Queries

    @Test func usersListPagesWithACursor() throws {
        let h = try EngineHarness()
        h.online(1, "bob")
        let all = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
                   "oscar", "peggy", "trent"]
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            var fields: KeyValuePairs<String, JSONValue> = ["limit": 5]
            if let cursor { fields = ["limit": 5, "cursor": .string(cursor)] }
            let (id, actions) = h.send(1, "users.list", fields)
            guard case .send(let to, let message)? = actions.first, actions.count == 1, to == [c(1)],
                  message.requestID == id, let uids = message.listedUIDs else {
                Issue.record("unexpected reply \(actions)")
                return
            }
            seen += uids
            cursor = message.nextCursor
            pages += 1
            if let cursor { #expect(cursor == "after:\(uids.last!)") }
        } while cursor != nil && pages < 10
        #expect(pages == 3)
        #expect(seen == all)
        // Viewer-specific flags and live status in the listed objects.
        let list = h.send(1, "users.list", ["limit": 2])
        guard case .send(_, .result(_, let result))? = list.actions.first else {
            Issue.record("no list reply")
            return
        }
        let users = result["users"]?.arrayValue?.compactMap(User.init(json:)) ?? []
        #expect(users == [h.engine.user("alice", viewer: "bob")!, h.engine.user("bob", viewer: "bob")!])
        #expect(users.map(\.status) == [.offline, .online])
    }

    @Test func usersListFiltersByStatus() throws {
        let h = try EngineHarness()
        h.online(1, "carol")
        h.online(2, "alice")
        h.online(3, "peggy")
        let first = h.send(1, "users.list", ["status": "online", "limit": 2])
        let firstMessage = try #require(first.actions.first?.message)
        #expect(firstMessage.listedUIDs == ["alice", "carol"])
        #expect(firstMessage.nextCursor == "after:carol")
        let second = h.send(1, "users.list", ["status": "online", "limit": 2, "cursor": "after:carol"])
        let secondMessage = try #require(second.actions.first?.message)
        #expect(secondMessage.listedUIDs == ["peggy"])
        #expect(secondMessage.nextCursor == nil)
        #expect(secondMessage.resultObject?["next"] == .null)
        let offline = h.send(1, "users.list", ["status": "offline", "limit": 100])
        let offlineMessage = try #require(offline.actions.first?.message)
        #expect(offlineMessage.listedUIDs == ["bob", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
                                              "mallory", "oscar", "trent"])
        #expect(offlineMessage.nextCursor == nil)
        let exact = h.send(1, "users.list", ["status": "online", "limit": 3])
        #expect(exact.actions.first?.message?.nextCursor == nil, "no cursor when nothing follows")
        let bad = h.send(1, "users.list", ["cursor": "page-2"])
        #expect(bad.actions == [.send([c(1)], .error(id: bad.id, ChatError(.invalidCursor)))])
    }

    @Test(arguments: [
        JSONValue.integer(0), .integer(101), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .double(1e30), .double(5.5), .double(10.0), .string("10"), .bool(true),
    ])
    func invalidLimitsAreRefused(limit: JSONValue) throws {
        let h = try EngineHarness()
        h.online(1, "alice")
        let (id, actions) = h.send(1, "users.list", ["limit": limit])
        #expect(actions == [.send([c(1)], .error(id: id, ChatError(.invalidLimit)))])
    }

    @Test func limitsAtTheEdgesAreAccepted() throws {
        let h = try EngineHarness()
        h.online(1, "alice")
        #expect(h.send(1, "users.list", ["limit": 1]).actions.first?.message?.listedUIDs == ["alice"])
        #expect(h.send(1, "users.list", ["limit": 100]).actions.first?.message?.listedUIDs?.count == 14)
        #expect(h.send(1, "users.list").actions.first?.message?.listedUIDs?.count == 14)
    }

    @Test func usersGetReturnsTheViewersObjectOrUidNotFound() throws {
        let h = try EngineHarness()
        h.online(1, "mallory")
        let carol = h.send(1, "users.get", ["uid": "carol"])
        var expected = h.engine.user("carol", viewer: nil)!
        expected.hasBlockedMe = true
        #expect(carol.actions == [.send([c(1)], .user(id: carol.id, expected))])
        let unknown = h.send(1, "users.get", ["uid": "zed"])
        #expect(unknown.actions == [.send([c(1)], .error(id: unknown.id, ChatError(.uidNotFound)))])
        let oscar = h.send(1, "users.get", ["uid": "oscar"])
        #expect(oscar.actions.first?.message?.resultUser?.deactivatedAt == 1_699_000_000)
    }
}

extension EngineAction {
    /// The message of a `.send`.
    var message: ServerMessage? {
        if case .send(_, let message) = self { return message }
        return nil
    }

    /// For a BAD_REQUEST error: `.some(id)`; for anything else nil.
    var badRequestID: RequestID?? {
        guard case .send(_, .error(let id, let error)) = self, error.code == ErrorCode.badRequest.rawValue else {
            return nil
        }
        return .some(id)
    }
}
