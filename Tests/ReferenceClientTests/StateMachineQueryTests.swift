import ChatProtocol
import EventLoop
import Testing
@testable import ReferenceClient

/// getUser, users requests with per-name paging, and presence listeners (004).
@Suite struct StateMachineQueryTests {
    static let carol = User(uid: "carol", status: .offline, lastActiveAt: 1_699_990_000)

    @Test func getUserNeedsALoginAndReportsUnknownUids() {
        var rig = Rig()
        _ = rig.call(.initialize(AppSettings()))
        let (early, refused) = rig.call(.getUser(uid: "bob"))
        #expect(refused == [.completeCall(early, .failure(ChatError(.notLoggedIn)))])

        rig.connectedAuto()
        let (lookup, sent) = rig.call(.getUser(uid: "bob"))
        #expect(sent == [.send(.integer(2), .getUser(uid: "bob"))])
        #expect(rig.receive(.user(id: .integer(2), Rig.bob)) == [.completeCall(lookup, .success(.user(Rig.bob)))])

        let (missing, _) = rig.call(.getUser(uid: "nobody"))
        let error = ChatError(.uidNotFound)
        #expect(rig.receive(.error(id: .integer(3), error)) == [.completeCall(missing, .failure(error))])
    }

    @Test func callsNeedingTheSocketFailWhileDisconnected() {
        var rig = Rig()
        rig.connectedManual()
        _ = rig.call(.disconnect)
        let (lookup, actions) = rig.call(.getUser(uid: "bob"))
        #expect(actions.count == 1)
        #expect(rig.machine.status == .disconnected)
        guard case .completeCall(lookup, let result) = actions.first else {
            Issue.record("expected a completion, got \(actions)")
            return
        }
        #expect(result.errorCode == ErrorCode.webSocketError.rawValue)
    }

    @Test func fetchNextPagesPerRequestNameUntilExhausted() {
        var rig = Rig()
        rig.connectedAuto()
        let (first, sent) = rig.call(.fetchNext(request: "online", limit: 2, status: .online))
        #expect(sent == [.send(.integer(2), .listUsers(UserListQuery(status: .online, limit: 2, cursor: nil)))])
        let page1 = UsersPage(users: [Rig.alice, Rig.bob], next: "p2")
        #expect(rig.receive(.users(id: .integer(2), page1.users, next: "p2")) == [.completeCall(first, .success(.users(page1)))])

        let (_, second) = rig.call(.fetchNext(request: "online", limit: 2, status: .online))
        #expect(second == [.send(.integer(3), .listUsers(UserListQuery(status: .online, limit: 2, cursor: "p2")))])
        _ = rig.receive(.users(id: .integer(3), [Self.carol], next: nil))

        let (done, exhausted) = rig.call(.fetchNext(request: "online", limit: 2, status: .online))
        #expect(exhausted == [.completeCall(done, .success(.users(UsersPage(users: [], next: nil))))])

        let (_, other) = rig.call(.fetchNext(request: "offline", limit: 30, status: .offline))
        #expect(other == [.send(.integer(4), .listUsers(UserListQuery(status: .offline, limit: 30, cursor: nil)))])
    }

    /// A request keeps the limit it was built with (docs/DRIVER.md, `fetchNext`): its
    /// next page asks again with 0 from the start; a new request uses its own limit.
    @Test func invalidLimitIsReportedAndTheRequestKeepsItsLimit() {
        var rig = Rig()
        rig.connectedAuto()
        let (bad, _) = rig.call(.fetchNext(request: "all", limit: 0, status: nil))
        let error = ChatError(.invalidLimit)
        #expect(rig.receive(.error(id: .integer(2), error)) == [.completeCall(bad, .failure(error))])
        let (_, retry) = rig.call(.fetchNext(request: "all", limit: 10, status: nil))
        #expect(retry == [.send(.integer(3), .listUsers(UserListQuery(status: nil, limit: 0, cursor: nil)))])
        let (_, fresh) = rig.call(.fetchNext(request: "ten", limit: 10, status: nil))
        #expect(fresh == [.send(.integer(4), .listUsers(UserListQuery(status: nil, limit: 10, cursor: nil)))])
    }

    @Test func presenceEventsReachTheCurrentUserListeners() {
        var rig = Rig()
        rig.connectedAuto(AppSettings(presence: .allUsers))
        #expect(rig.receive(.userOnline(Rig.bob)) == [])
        _ = rig.call(.addUserListener("list"))
        _ = rig.call(.addUserListener("header"))
        _ = rig.call(.addUserListener("list"))
        #expect(rig.receive(.userOnline(Rig.bob)) == [.userEvent(listeners: ["list", "header"], .online, Rig.bob)])
        _ = rig.call(.removeUserListener("list"))
        #expect(rig.receive(.userOffline(Self.carol)) == [.userEvent(listeners: ["header"], .offline, Self.carol)])
    }

    @Test func presenceSubscriptionGoesIntoTheLogin() {
        var rig = Rig()
        let settings = AppSettings(presence: .roles(["admin"]), deviceId: "phone-7")
        _ = rig.call(.initialize(settings))
        _ = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(rig.opened().first == .send(.integer(1), Rig.loginRequest(settings: settings)))
    }

    @Test func tokenLoginSendsTheTokenWithoutUid() {
        var rig = Rig()
        _ = rig.call(.initialize(AppSettings()))
        _ = rig.call(.loginWithToken("tok-1"))
        let expected = Request.login(LoginRequest(uid: nil, token: "tok-1", deviceId: "device-1", platform: .mobile,
                                                  presence: .none))
        #expect(rig.opened().first == .send(.integer(1), expected))
    }

    @Test func relaunchForgetsListeners() {
        var rig = Rig()
        rig.connectedAuto()
        _ = rig.call(.addUserListener("list"))
        _ = rig.env(.relaunch)
        _ = rig.call(.initialize(AppSettings()))
        _ = rig.opened()
        _ = rig.receive(.loggedIn(id: .integer(1), user: Rig.alice, connectionId: "c2", serverTime: 1))
        #expect(rig.receive(.userOnline(Rig.bob)) == [])
    }
}
