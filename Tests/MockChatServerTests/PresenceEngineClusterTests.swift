import ChatProtocol
import EventLoop
import MockChatServer
import Testing

/// The engine's cluster seam: local logins become claims, presence follows the device
/// stream, remote mobiles count for the device policy, and a reconnect that asks not to
/// kick waits for Redis's answer.
@Suite struct PresenceEngineClusterTests {
    private func clustered(_ configure: (inout AppConfiguration) -> Void = { _ in }) throws -> EngineHarness {
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
        #expect(actions.last == .claimDevice(ClusterDevice(uid: "alice", node: "a", connection: "c2", deviceId: "alice-laptop",
                                                           platform: .desktop, since: h.now.seconds),
                                             DeviceClaim(mobileLimit: 1, refusesToKick: false)))
        // The stream's echo is what fans out, once, however many devices follow.
        let device = ClusterDevice(uid: "alice", node: "a", connection: "c2", deviceId: "alice-laptop", platform: .desktop, since: 1)
        #expect(presence(h.engine.clusterDeviceAdded(device, now: h.now)) == ["online alice"])
        #expect(presence(h.engine.clusterDeviceAdded(remote("alice", "c9", device: "alice-phone"), now: h.now)).isEmpty)
        #expect(presence(h.engine.clusterDeviceRemoved(uid: "alice", field: "a/c2", lastActiveAt: 5, now: h.now)).isEmpty)
        #expect(presence(h.engine.clusterDeviceRemoved(uid: "alice", field: "b/c9", lastActiveAt: 5, now: h.now)) == ["offline alice"])
        #expect(h.engine.user("alice", viewer: nil)?.lastActiveAt == 5)
    }

    @Test func aMobileLoginIsClaimedAndKicksNothingItselfOnOtherNodes() throws {
        let h = try clustered()
        _ = h.engine.clusterDeviceAdded(remote("bob", "c3", device: "bob-phone-1"), now: h.now)
        #expect(h.engine.isOnline("bob"))
        h.open(1)
        let actions = h.login(1, "bob", device: "bob-phone-2", platform: .mobile).actions
        // Redis's claim script kicks the device on b; the reply does not wait for it.
        #expect(actions.contains { if case .send(_, .result) = $0 { true } else { false } })
        #expect(actions.last == .claimDevice(ClusterDevice(uid: "bob", node: "a", connection: "c1", deviceId: "bob-phone-2",
                                                           platform: .mobile, since: h.now.seconds),
                                             DeviceClaim(mobileLimit: 1, refusesToKick: false)))
    }

    @Test func aReconnectThatAsksNotToKickWaitsForRedis() throws {
        let h = try clustered { $0.clientKickControl = true }
        h.open(1)
        h.open(2)
        let first = h.login(1, "bob", device: "bob-phone-1", platform: .mobile, reconnect: true, reconnectKickEnable: true)
        #expect(first.actions == [.claimDevice(ClusterDevice(uid: "bob", node: "a", connection: "c1", deviceId: "bob-phone-1",
                                                             platform: .mobile, since: h.now.seconds),
                                               DeviceClaim(mobileLimit: 1, refusesToKick: true))])
        #expect(h.engine.session(EngineHarness.c(1))?.stage == .awaitingLogin)
        let second = h.login(2, "bob", device: "bob-phone-2", platform: .mobile, reconnect: true, reconnectKickEnable: true)
        // Redis stored the first and refused the second: one logs in, one gets 4004.
        let granted = h.engine.clusterClaimAnswered(EngineHarness.c(1), granted: true, now: h.now)
        #expect(granted.contains { if case .send([EngineHarness.c(1)], .result) = $0 { true } else { false } })
        let refused = h.engine.clusterClaimAnswered(EngineHarness.c(2), granted: false, now: h.now)
        #expect(refused == [.send([EngineHarness.c(2)], .error(id: second.id, ChatError(.reconnectKickRefused))),
                            .close(EngineHarness.c(2), .reconnectRefused, reason: ErrorCode.reconnectKickRefused.rawValue)])
        #expect(h.engine.clusterClaimAnswered(EngineHarness.c(2), granted: false, now: h.now).isEmpty)
    }

    @Test func aKickBeforeTheAnswerLandsAfterTheLogin() throws {
        let h = try clustered { $0.clientKickControl = true }
        h.open(1)
        _ = h.login(1, "bob", device: "bob-phone-1", platform: .mobile, reconnect: true, reconnectKickEnable: true)
        #expect(h.engine.kick(EngineHarness.c(1), reason: "another mobile device logged in", byDeviceId: "bob-phone-9",
                              byPlatform: .mobile, now: h.now).isEmpty)
        let actions = h.engine.clusterClaimAnswered(EngineHarness.c(1), granted: true, now: h.now)
        let kinds = actions.map { action -> String in
            switch action {
            case .send(_, .result): "loggedIn"
            case .send(_, .deviceKicked(_, _, _)): "kicked"
            case .close(_, let code, _): "close \(code.rawValue)"
            case .retractDevice(_, _, let close?): "retract, then close \(close.code.rawValue)"
            case .retractDevice: "retract"
            default: "other"
            }
        }
        #expect(kinds == ["loggedIn", "kicked", "retract, then close 4001"])
    }

    @Test func aConnectionGoneBeforeTheAnswerTakesBackItsDevice() throws {
        let h = try clustered { $0.clientKickControl = true }
        h.open(1)
        _ = h.login(1, "bob", device: "bob-phone-1", platform: .mobile, reconnect: true, reconnectKickEnable: true)
        #expect(h.engine.closed(EngineHarness.c(1), now: h.now).isEmpty)
        let actions = h.engine.clusterClaimAnswered(EngineHarness.c(1), granted: true, now: h.now)
        #expect(actions.count == 1)
        #expect(actions.first.map { if case .retractDevice(let d, _, nil) = $0 { d.field == "a/c1" } else { false } } == true)
    }

    @Test func aServerCloseOfALoggedInDeviceRidesOnItsRetraction() throws {
        let h = try clustered()
        h.open(1); _ = h.login(1, "bob", device: "bob-web")
        h.open(2); _ = h.login(2, "alice", device: "alice-laptop")
        h.open(3)
        let device = ClusterDevice(uid: "bob", node: "a", connection: "c1", deviceId: "bob-web", platform: .desktop,
                                   since: h.now.seconds)
        #expect(h.engine.disconnect(EngineHarness.c(1), code: .goingAway, reason: "bye", now: h.now)
                == [.retractDevice(device, lastActiveAt: h.now.seconds,
                                   thenClose: ConnectionClose(EngineHarness.c(1), .goingAway, reason: "bye"))])
        // A connection the transport reports gone retracts with nothing to close; one
        // not logged in has no device, so its close goes alone.
        #expect(h.engine.closed(EngineHarness.c(2), now: h.now).map {
            if case .retractDevice(_, _, let close) = $0 { close == nil } else { false }
        } == [true])
        #expect(h.engine.disconnect(EngineHarness.c(3), code: .goingAway, reason: "bye", now: h.now)
                == [.close(EngineHarness.c(3), .goingAway, reason: "bye")])
    }

    @Test func remoteMobileRefusesAReconnectThatAsksNotToKick() throws {
        let h = try clustered { $0.clientKickControl = true }
        _ = h.engine.clusterDeviceAdded(remote("bob", "c3", device: "bob-phone-1"), now: h.now)
        h.open(1)
        let actions = h.login(1, "bob", device: "bob-phone-2", platform: .mobile, reconnect: true, reconnectKickEnable: true).actions
        #expect(actions.contains { if case .close(_, .reconnectRefused, _) = $0 { true } else { false } })
        #expect(!actions.contains { if case .claimDevice = $0 { true } else { false } })
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
        #expect(!actions.contains { if case .claimDevice = $0 { true } else { false } })
        #expect(h.engine.clusterDeviceAdded(remote("bob", "c1", device: "y"), now: h.now).isEmpty)
        #expect(!h.engine.isOnline("bob"))
    }
}
