import ChatProtocol
import EventLoop
import Foundation
@testable import MockChatServer
import MockChatTestSupport
import Testing

/// The silence fault (docs/PROTOCOL.md, 12.7, "Silence"): a network path that loses
/// everything, measured over real sockets on the virtual clock.
@Suite("Silence")
struct SilenceTests {
    /// Alice (silenced) and bob (watching everybody), logged in.
    static func aliceAndBob() throws -> (ServerFixture, alice: TestClient, bob: TestClient) {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "alice-phone")
        let bob = try f.loggedIn("bob", device: "bob-desk")
        alice.clear()
        return (f, alice, bob)
    }

    @Test func theServerExpiresASilentConnectionAtItsHeartbeatAndTheClientSeesNothing() throws {
        let (f, alice, bob) = try Self.aliceAndBob()
        let start = f.now
        #expect(try f.fault(#"{"fault":"silence","uid":"alice"}"#)?["affected"] == 1)
        // What alice sends is held; what the server sends her does not arrive.
        let ping = alice.send("ping")
        f.settle()
        try f.loggedIn("carol", device: "carol-desk").close()
        f.settle()
        #expect(alice.reply(to: ping) == nil && alice.messages.isEmpty)
        // Bob keeps himself alive; alice's last activity was her login.
        f.advance(seconds: 20)
        #expect(bob.request("ping") != nil)
        #expect(!bob.presence.contains { $0.user.uid == "alice" })
        f.advance(seconds: 10)
        let offline = bob.presence.filter { $0.event == "user.offline" && $0.user.uid == "alice" }
        #expect(offline.count == 1, "the heartbeat rule still applies")
        #expect(offline.first?.user.lastActiveAt == start.advanced(by: 30_000).seconds, "the heartbeat's time, as without a fault")
        #expect(f.server.trace.entries.contains { $0.text == "silence: close 4002 not delivered" })
        // The close is not delivered: alice's socket is open, with nothing received.
        f.advance(seconds: 10)
        #expect(!alice.isClosed && alice.messages.isEmpty)
        #expect(f.server.sessionCount == 2, "the silent socket is still open")
        // Lifted: the server had given up on it, so the connection is reset.
        #expect(try f.fault(#"{"fault":"silence","uid":"alice","enabled":false}"#) != nil)
        #expect(f.loop.run(timeout: 5) { alice.isClosed })
        #expect(alice.closeInfo?.received == nil && alice.messages.isEmpty, "\(String(describing: alice.closeInfo))")
        #expect(f.server.sessionCount == 1)
        #expect(try f.faults()?["silences"] == [])
    }

    @Test func whatTheClientDidMeanwhileIsAppliedInOrderWhenLifted() throws {
        let (f, alice, bob) = try Self.aliceAndBob()
        #expect(try f.fault(#"{"fault":"silence","deviceId":"alice-phone"}"#)?["affected"] == 1)
        let ping = alice.send("ping")
        f.settle()
        alice.close(code: 1000)
        f.settle()
        // Less than the client's 5 s close timeout, after which it would end the stream itself.
        f.advance(seconds: 4)
        // The close frame and the end of the stream have not arrived: alice is online.
        #expect(!bob.presence.contains { $0.user.uid == "alice" })
        #expect(try f.control("GET", "/control/presence").json?["online"] == ["alice", "bob"])
        #expect(!alice.isClosed, "the server's answer to the close is held too")
        let liftedAt = f.now
        #expect(try f.fault(#"{"fault":"silence","deviceId":"alice-phone","enabled":false}"#) != nil)
        #expect(f.loop.run(timeout: 5) { alice.isClosed })
        f.settle()
        // The ping, then the close, each as of the lift.
        let entries = f.server.trace.entries.filter { $0.connection?.description == "c1" && $0.time >= liftedAt }
        #expect(entries.map(\.kind).filter { $0 != .fault } == [.in, .out, .close])
        #expect(entries.first { $0.kind == .in }?.frame?["op"] == "ping")
        #expect(alice.closeInfo?.sent == 1000 && alice.closeInfo?.received == 1000, "\(String(describing: alice.closeInfo))")
        #expect(alice.reply(to: ping) != nil, "the held ping's reply reaches alice before the answer to her close")
        let offline = bob.presence.filter { $0.event == "user.offline" && $0.user.uid == "alice" }
        #expect(offline.count == 1 && offline.first?.user.lastActiveAt == liftedAt.seconds)
    }

    @Test func heldFramesFromTheServerArriveWhenLiftedAndTheSessionGoesOn() throws {
        let (f, alice, _) = try Self.aliceAndBob()
        #expect(try f.fault(#"{"fault":"silence","connection":"c1"}"#)?["affected"] == 1)
        _ = try f.loggedIn("carol", device: "carol-desk")
        let ping = alice.send("ping")
        f.advance(seconds: 10)
        #expect(alice.messages.isEmpty)
        #expect(try f.fault(#"{"fault":"silence","connection":"c1","enabled":false}"#) != nil)
        f.settle()
        #expect(alice.presence.map(\.event) == ["user.online"], "carol's online, sent during the silence")
        #expect(alice.reply(to: ping) != nil, "the ping, processed at the lift")
        #expect(alice.request("ping") != nil && !alice.isClosed)
    }

    @Test func newAttemptsHangOrGoThroughAsTheFaultSays() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "alice-phone")
        #expect(try f.fault(#"{"fault":"silence"}"#)?["affected"] == 1)
        var outcome: Result<WebSocket, WebSocketClient.Failure>?
        WebSocketClient.connect(on: f.loop, to: f.server.address, path: "/v1/ws", seed: 99) { outcome = $0 }
        f.settle()
        f.advance(seconds: 30)
        #expect(outcome == nil, "the upgrade is never answered")
        #expect(f.server.trace.entries.contains { $0.text == "silence: upgrade held, not answered until the silence lifts" })
        try f.clearFaults()
        #expect(f.loop.run(timeout: 5) { outcome != nil })
        let late = TestClient(fixture: f, socket: try #require(try outcome?.get()))
        #expect(late.login(uid: "bob", device: "bob-desk")?.resultObject != nil)
        #expect(alice.isClosed || alice.messages.isEmpty)

        // An interface change: alice's old socket is silent, her new one works.
        let g = try ServerFixture()
        let old = try g.loggedIn("alice", device: "alice-phone")
        #expect(try g.fault(#"{"fault":"silence","uid":"alice","newConnections":"pass"}"#) != nil)
        let fresh = try g.loggedIn("alice", device: "alice-phone-2")
        #expect(fresh.request("ping") != nil)
        #expect(old.messages.isEmpty && !old.isClosed)

        // Hanging by uid: the new connection's login is never answered.
        let h = try ServerFixture()
        _ = try h.loggedIn("alice", device: "alice-phone")
        #expect(try h.fault(#"{"fault":"silence","uid":"alice"}"#) != nil)
        let retry = try h.connect()
        #expect(retry.login(uid: "alice", device: "alice-phone") == nil)
        h.advance(seconds: 9)
        #expect(retry.messages.isEmpty && !retry.isClosed)
        #expect(try h.fault(#"{"fault":"silence","uid":"alice","enabled":false}"#) != nil)
        h.settle()
        #expect(retry.messages.first?.resultObject?["connectionId"] != nil, "answered when lifted")
    }

    @Test func aResetClearsASilenceAndEndsItsConnections() throws {
        let (f, alice, _) = try Self.aliceAndBob()
        #expect(try f.fault(#"{"fault":"silence","uid":"alice"}"#) != nil)
        #expect(try f.control("POST", "/control/reset").status == 200)
        #expect(f.loop.run(timeout: 5) { alice.isClosed })
        #expect(alice.closeInfo?.received == nil, "no close frame reaches a silent client: its connection is reset")
        #expect(try f.faults()?["silences"] == [])
        #expect(f.loop.run(timeout: 5) { f.server.sessionCount == 0 })
    }
}
