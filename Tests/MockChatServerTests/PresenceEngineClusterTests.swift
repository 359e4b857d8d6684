import ChatProtocol
import EventLoop
import MockChatServer
import Testing

/// The engine's cluster seam: local logins become announcements, presence follows the
/// device stream, remote mobiles count for the device policy.
@Suite struct PresenceEngineClusterTests {
    private func clustered(_ configure: (inout AppSettings) -> Void = { _ in }) throws -> EngineHarness {
        let harness = try EngineHarness(configure: configure)
        harness.engine.joinCluster(node: "a")
        return harness
    }

    private func remote(_ uid: String, _ connection: String, device: String, platform: Platform = .mobile) -> ClusterDevice {
        ClusterDevice(uid: uid, node: "b", connection: connection, deviceId: device, platform: platform, since: 1)
    }

    private func presence(_ actions: [EngineAction]) -> [String] {
        actions.compactMap { action in
            guard case .send(_, let message) = action else { return nil }
            switch message {
            case .userOnline(let user): return "online \(user.uid)"
            case .userOffline(let user): return "offline \(user.uid)"
            default: return nil
            }
        }
    }

    @Test func localLoginIsAnnouncedNotFannedOut() throws {
        let h = try clustered()
        h.open(1); _ = h.login(1, "bob", device: "bob-web")
        h.open(2)
        let actions = h.login(2, "alice", device: "alice-laptop").actions
        #expect(presence(actions).isEmpty)
        #expect(actions.contains { if case .announceDevice(let d) = $0 { d.uid == "alice" && d.node == "a" && d.connection == "c2" } else { false } })
        // The stream's echo is what fans out, once, however many devices follow.
        let device = ClusterDevice(uid: "alice", node: "a", connection: "c2", deviceId: "alice-laptop", platform: .desktop, since: 1)
        #expect(presence(h.engine.clusterDeviceAdded(device, now: h.now)) == ["online alice"])
        #expect(presence(h.engine.clusterDeviceAdded(remote("alice", "c9", device: "alice-phone"), now: h.now)).isEmpty)
        #expect(presence(h.engine.clusterDeviceRemoved(uid: "alice", field: "a/c2", lastActiveAt: 5, now: h.now)).isEmpty)
        #expect(presence(h.engine.clusterDeviceRemoved(uid: "alice", field: "b/c9", lastActiveAt: 5, now: h.now)) == ["offline alice"])
        #expect(h.engine.user("alice", viewer: nil)?.lastActiveAt == 5)
    }

    @Test func remoteMobileIsKickedThroughAnAction() throws {
        let h = try clustered()
        _ = h.engine.clusterDeviceAdded(remote("bob", "c3", device: "bob-phone-1"), now: h.now)
        #expect(h.engine.isOnline("bob"))
        h.open(1)
        let actions = h.login(1, "bob", device: "bob-phone-2", platform: .mobile).actions
        #expect(actions.contains {
            if case .kickRemote(let d, _, let by, .mobile) = $0 { d.field == "b/c3" && by == "bob-phone-2" } else { false }
        })
    }

    @Test func remoteMobileRefusesAReconnectThatAsksNotToKick() throws {
        let h = try clustered { $0.clientKickControl = true }
        _ = h.engine.clusterDeviceAdded(remote("bob", "c3", device: "bob-phone-1"), now: h.now)
        h.open(1)
        let actions = h.login(1, "bob", device: "bob-phone-2", platform: .mobile, reconnect: true, reconnectKickEnable: true).actions
        #expect(actions.contains { if case .close(_, .reconnectRefused, _) = $0 { true } else { false } })
        #expect(!actions.contains { if case .kickRemote = $0 { true } else { false } })
    }

    @Test func snapshotTurnsDifferencesIntoEvents() throws {
        let h = try clustered()
        h.open(1); _ = h.login(1, "trent", device: "t")
        _ = h.engine.clusterDeviceAdded(remote("alice", "c1", device: "x"), now: h.now)
        let actions = h.engine.clusterSnapshot([remote("bob", "c2", device: "y")], now: h.now)
        #expect(presence(actions) == ["offline alice", "online bob"])
        #expect(h.engine.onlineUsers == ["bob", "trent"])
    }

    @Test func withoutClusterNothingIsAnnounced() throws {
        let h = try EngineHarness()
        h.open(1)
        let actions = h.login(1, "alice", device: "alice-laptop").actions
        #expect(!actions.contains { if case .announceDevice = $0 { true } else { false } })
        #expect(h.engine.clusterDeviceAdded(remote("bob", "c1", device: "y"), now: h.now).isEmpty)
        #expect(!h.engine.isOnline("bob"))
    }
}
