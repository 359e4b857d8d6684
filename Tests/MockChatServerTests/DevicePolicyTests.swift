import ChatProtocol
import MockChatCore
import MockChatServer
import Testing

/// `DevicePolicy.decide` against the golden table, and the engine using it with more
/// than one mobile device allowed, on one node and in cluster mode.
@Suite struct DevicePolicyTests {
    @Test(arguments: DevicePolicyGoldenTable.cases)
    func decideFollowsTheGoldenTable(_ golden: DevicePolicyCase) {
        #expect(golden.policy.decide(golden.login, holders: golden.holders) == golden.expected)
    }

    private func kicked(_ actions: [EngineAction]) -> [ConnectionID] {
        actions.flatMap { action -> [ConnectionID] in
            if case .send(let ids, .deviceKicked(_, _, _)) = action { ids } else { [] }
        }
    }

    @Test func twoMobilesAllowedKickTheOldestOnOneNode() throws {
        let h = try EngineHarness { $0.mobileDevicesPerUser = 2 }
        for number in 1...3 { h.open(number) }
        #expect(kicked(h.login(1, "bob", device: "p1", platform: .mobile).actions).isEmpty)
        h.now = h.now.advanced(by: 1000)
        #expect(kicked(h.login(2, "bob", device: "p2", platform: .mobile).actions).isEmpty)
        h.now = h.now.advanced(by: 1000)
        #expect(kicked(h.login(3, "bob", device: "p3", platform: .mobile).actions) == [ConnectionID(1)])
    }

    /// Two mobiles allowed, the oldest on another node: a third mobile login on this
    /// node leaves this node's newer phone alone, and Redis kicks the oldest. (Fails
    /// before the one policy: the node kicked its own phone c1 while b/c7 lived on.)
    @Test func aNodeDoesNotKickItsNewerPhoneWhileAnOlderOneLivesElsewhere() throws {
        let h = try EngineHarness { $0.mobileDevicesPerUser = 2 }
        h.engine.joinCluster(node: "a")
        let older = ClusterDevice(uid: "bob", node: "b", connection: "c7", deviceId: "p1", platform: .mobile,
                                  since: h.now.seconds - 10)
        _ = h.engine.clusterDeviceAdded(older, now: h.now)
        h.open(1); h.open(2)
        #expect(kicked(h.login(1, "bob", device: "p2", platform: .mobile).actions).isEmpty)
        h.now = h.now.advanced(by: 1000)
        let actions = h.login(2, "bob", device: "p3", platform: .mobile).actions
        #expect(kicked(actions).isEmpty)
        #expect(actions.contains { if case .claimDevice(let device, _) = $0 { device.connection == "c2" } else { false } })
    }

    /// The other way round: this node's phone is the oldest, so this node kicks it.
    @Test func aNodeKicksItsOwnPhoneWhenItIsTheOldest() throws {
        let h = try EngineHarness { $0.mobileDevicesPerUser = 2 }
        h.engine.joinCluster(node: "a")
        h.open(1); h.open(2)
        _ = h.login(1, "bob", device: "p1", platform: .mobile)
        let newer = ClusterDevice(uid: "bob", node: "b", connection: "c7", deviceId: "p2", platform: .mobile,
                                  since: h.now.seconds + 1)
        _ = h.engine.clusterDeviceAdded(newer, now: h.now)
        h.now = h.now.advanced(by: 2000)
        #expect(kicked(h.login(2, "bob", device: "p3", platform: .mobile).actions) == [ConnectionID(1)])
    }

    @Test func theLuaRuleNamesTheSameReasons() {
        for reason in DevicePolicy.Reason.allCases { #expect(DevicePolicy.lua.contains("'\(reason.rawValue)'")) }
    }
}
