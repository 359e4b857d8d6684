import ChatProtocol
@testable import ProtocolFuzzer
import Testing

/// The reference model's rules, one by one, as the documents state them.
@Suite struct ReferenceModelTests {
    let roster = Roster.embedded()

    func model(clientKickControl: Bool = false, mobiles: Int = 1) -> ReferenceModel {
        ReferenceModel(roster: roster, settings: .init(clientKickControl: clientKickControl, mobileDevicesPerUser: mobiles))
    }

    func login(_ uid: String, _ device: String, _ platform: Platform = .mobile, presence: PresenceSubscription = .allUsers,
               reconnect: Bool = false, kickEnable: Bool = false, key: String? = nil) -> LoginSpec {
        LoginSpec(uid: uid, device: device, platform: platform, presence: presence, reconnect: reconnect,
                  reconnectKickEnable: kickEnable, authKey: key)
    }

    func count(_ model: ReferenceModel, _ wire: String, _ kind: WireView.FrameKind) -> Int {
        model.wires[wire]?.counts[kind] ?? 0
    }

    // MARK: Presence (004, "Real-time Presence"; PROTOCOL.md §7)

    @Test func secondDeviceSendsNoSecondOnlineAndLastDeviceSendsOffline() {
        var m = model()
        m.apply(.connect(name: "w", login: login("alice", "alice-web", .web)))
        m.apply(.connect(name: "p", login: login("bob", "bob-phone")))
        m.apply(.connect(name: "l", login: login("bob", "bob-laptop", .desktop)))
        #expect(count(m, "w", .online("bob")) == 1)
        m.apply(.drop(name: "p"))
        #expect(count(m, "w", .offline("bob")) == 0)
        #expect(m.onlineUsers == ["alice", "bob"])
        m.apply(.logout(name: "l"))
        #expect(count(m, "w", .offline("bob")) == 1)
        #expect(m.onlineUsers == ["alice"])
        #expect(m.wires["l"]?.closeCode == 1000)
        #expect(m.wires["l"]?.counts[.loggedOut] == 1)
    }

    @Test func eventsFollowTheSubscriptionAndNeverGoToTheUserItself() {
        var m = model()
        m.apply(.connect(name: "friends", login: login("bob", "bob-web", .web, presence: .friends)))
        m.apply(.connect(name: "mods", login: login("dave", "dave-web", .web, presence: .roles(["moderator"]))))
        m.apply(.connect(name: "none", login: login("erin", "erin-web", .web, presence: .none)))
        m.apply(.connect(name: "self", login: login("carol", "carol-web", .web)))
        m.apply(.connect(name: "carol2", login: login("carol", "carol-laptop", .desktop)))
        m.apply(.connect(name: "alice", login: login("alice", "alice-web", .web)))
        // bob and alice are friends; carol is a moderator; erin subscribes to nobody.
        #expect(count(m, "friends", .online("alice")) == 1)
        #expect(count(m, "friends", .online("carol")) == 0)
        #expect(count(m, "mods", .online("carol")) == 1)
        #expect(count(m, "mods", .online("alice")) == 0)
        #expect(m.wires["none"]?.total == 1)  // its own login reply only
        #expect(count(m, "self", .online("carol")) == 0)
    }

    // MARK: Device policy (003, "Reconnection kick strategy"; PROTOCOL.md §8)

    @Test func aSecondMobileKicksTheFirstWithoutPresenceEvents() {
        var m = model()
        m.apply(.connect(name: "watch", login: login("alice", "alice-web", .web)))
        m.apply(.connect(name: "p1", login: login("bob", "bob-phone")))
        m.apply(.connect(name: "p2", login: login("bob", "bob-tablet")))
        #expect(m.wires["p1"]?.isOpen == false)
        #expect(m.wires["p1"]?.closeCode == 4001)
        #expect(count(m, "p1", .kicked) == 1)
        #expect(count(m, "watch", .online("bob")) == 1)
        #expect(count(m, "watch", .offline("bob")) == 0)
    }

    @Test func theSameDeviceIdIsKickedWhateverThePlatform() {
        var m = model()
        m.apply(.connect(name: "a", login: login("bob", "bob-laptop", .desktop)))
        m.apply(.connect(name: "b", login: login("bob", "bob-laptop", .web)))
        #expect(m.wires["a"]?.closeCode == 4001)
        m.apply(.connect(name: "c", login: login("bob", "bob-web", .web)))
        #expect(m.wires["b"]?.isOpen == true)
    }

    @Test func withTwoMobilesAllowedTheThirdKicksTheOldest() {
        var m = model(mobiles: 2)
        m.apply(.connect(name: "p1", login: login("bob", "bob-phone")))
        m.apply(.connect(name: "p2", login: login("bob", "bob-tablet")))
        #expect(m.wires["p1"]?.isOpen == true)
        m.apply(.connect(name: "p3", login: login("bob", "bob-other")))
        #expect(m.wires["p1"]?.closeCode == 4001)
        #expect(m.wires["p2"]?.isOpen == true)
    }

    @Test func aReconnectAskingNotToKickIsRefusedOnlyWithClientKickControl() {
        var off = model()
        off.apply(.connect(name: "p1", login: login("bob", "bob-phone")))
        off.apply(.connect(name: "p2", login: login("bob", "bob-tablet", reconnect: true, kickEnable: true)))
        #expect(off.wires["p1"]?.closeCode == 4001)

        var on = model(clientKickControl: true)
        on.apply(.connect(name: "p1", login: login("bob", "bob-phone")))
        on.apply(.connect(name: "l1", login: login("bob", "bob-laptop", .desktop)))
        // The refusal happens before anything else: not even the same device is kicked.
        on.apply(.connect(name: "p2", login: login("bob", "bob-laptop", reconnect: true, kickEnable: true)))
        #expect(on.wires["p2"]?.closeCode == 4004)
        #expect(on.wires["p2"]?.counts[.error("ERR_RECONNECT_KICK_REFUSED")] == 1)
        #expect(on.wires["p1"]?.isOpen == true)
        #expect(on.wires["l1"]?.isOpen == true)
        // Without `reconnect`, the flag has no effect.
        on.apply(.connect(name: "p3", login: login("bob", "bob-tablet", kickEnable: true)))
        #expect(on.wires["p1"]?.closeCode == 4001)
    }

    // MARK: Login checks (PROTOCOL.md §4.1, §18)

    @Test func refusedLoginsCloseWith4003InTheDocumentedOrder() {
        var m = model()
        m.apply(.connect(name: "a", login: login("nobody", "x", key: "wrong")))
        m.apply(.connect(name: "b", login: login("nobody", "x")))
        m.apply(.connect(name: "c", login: login("oscar", "x")))
        m.apply(.connect(name: "d", login: login("alice", "x", key: "wrong")))
        #expect(m.wires["a"]?.counts[.error("ERR_AUTH_FAILED")] == 1)
        #expect(m.wires["b"]?.counts[.error("ERR_UID_NOT_FOUND")] == 1)
        #expect(m.wires["c"]?.counts[.error("ERR_USER_DEACTIVATED")] == 1)
        #expect(m.wires["d"]?.counts[.error("ERR_AUTH_FAILED")] == 1)
        #expect(["a", "b", "c", "d"].allSatisfy { m.wires[$0]?.closeCode == 4003 })
        #expect(m.live.isEmpty)
    }

    @Test func aSecondLoginOnOneConnectionIsRefusedAndChangesNothing() {
        var m = model()
        m.apply(.connect(name: "a", login: login("alice", "alice-web", .web)))
        m.apply(.login(name: "a", login("bob", "bob-web", .web)))
        #expect(m.wires["a"]?.counts[.error("ERR_ALREADY_LOGGED_IN")] == 1)
        #expect(m.onlineUsers == ["alice"])
        m.apply(.connect(name: "p", login: nil))
        m.apply(.ping(name: "p"))
        #expect(m.wires["p"]?.counts[.error("ERR_NOT_LOGGED_IN")] == 1)
    }

    // MARK: Heartbeat (000, "Manual Mode"; PROTOCOL.md §9)

    @Test func silenceForExactlyTheTimeoutCloses4002AndActivityPostponesItAndNoLoginCloses4010() {
        var m = model()
        m.apply(.connect(name: "w", login: login("alice", "alice-web", .web)))
        m.apply(.connect(name: "b", login: login("bob", "bob-web", .web)))
        m.apply(.connect(name: "pending", login: nil))
        m.apply(.advance(milliseconds: 9_999))
        #expect(m.live.count == 3)
        m.apply(.advance(milliseconds: 1))
        // Never logged in: the login deadline (10 s) comes first.
        #expect(m.wires["pending"]?.closeCode == 4010)
        m.apply(.ping(name: "w"))
        m.apply(.advance(milliseconds: 19_999))
        #expect(m.live.count == 2)
        m.apply(.advance(milliseconds: 1))
        #expect(m.wires["b"]?.closeCode == 4002)
        #expect(count(m, "w", .offline("bob")) == 1)
        m.apply(.advance(milliseconds: 10_000))
        #expect(m.wires["w"]?.closeCode == 4002)
    }

    @Test func simultaneousTimeoutsLeaveTheClosingSubscribersUnchecked() {
        var m = model()
        m.apply(.connect(name: "a", login: login("alice", "alice-web", .web)))
        m.apply(.connect(name: "b", login: login("bob", "bob-web", .web)))
        m.apply(.advance(milliseconds: 30_000))
        #expect(m.wires["a"]?.countsKnown == false)
        #expect(m.wires["b"]?.countsKnown == false)
        let groups = m.expectations().map(\.group)
        #expect(!groups.contains(.presence) && !groups.contains(.totals))
    }

    // MARK: Faults (PROTOCOL.md §12.7, §18)

    @Test func aBlackholeSwallowsBothWaysAndTheHeartbeatCutsTheStream() {
        var m = model()
        m.apply(.connect(name: "w", login: login("alice", "alice-web", .web)))
        m.apply(.connect(name: "b", login: login("bob", "bob-web", .web)))
        m.apply(.blackhole(FaultSelector(uid: "bob"), enabled: true))
        m.apply(.advance(milliseconds: 20_000))
        m.apply(.ping(name: "w"))
        m.apply(.ping(name: "b"))  // swallowed: no reply, no activity
        #expect(m.wires["b"]?.counts[.pong] == nil)
        m.apply(.connect(name: "c", login: login("carol", "carol-web", .web)))
        #expect(count(m, "b", .online("carol")) == 0)
        #expect(count(m, "w", .online("carol")) == 1)
        m.apply(.advance(milliseconds: 10_000))
        #expect(m.wires["b"]?.isOpen == false)
        #expect(m.wires["b"]?.closeCode == nil)
        #expect(count(m, "w", .offline("bob")) == 1)
    }

    @Test func dropFaultsAndAppSettingsClose() {
        var m = model()
        m.apply(.connect(name: "w", login: login("alice", "alice-web", .web)))
        m.apply(.connect(name: "b1", login: login("bob", "bob-web", .web)))
        m.apply(.connect(name: "b2", login: login("bob", "bob-laptop", .desktop)))
        m.apply(.faultDrop(FaultSelector(uid: "bob")))
        #expect(m.wires["b1"]?.isOpen == false && m.wires["b2"]?.isOpen == false)
        #expect(count(m, "w", .offline("bob")) == 1)
        m.apply(.connect(name: "p", login: nil))
        m.apply(.setApp(clientKickControl: true, mobileDevicesPerUser: 1))
        #expect(m.wires["w"]?.closeCode == 4009 && m.wires["p"]?.closeCode == 4009)
        #expect(m.settings.clientKickControl)
        m.apply(.reset)
        #expect(!m.settings.clientKickControl)
    }

    @Test func actionsThatCannotHappenAreRefusedWithoutChanges() {
        var m = model()
        let unknown = m.apply(.ping(name: "nobody-here"))
        let opened = m.apply(.connect(name: "a", login: nil))
        let again = m.apply(.connect(name: "a", login: nil))
        m.apply(.close(name: "a"))
        let afterClose = m.apply(.logout(name: "a"))
        #expect(!unknown && opened && !again && !afterClose)
        #expect(m.wires["a"]?.closeCodeKnown == false)
    }
}
