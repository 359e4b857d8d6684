import ChatProtocol
import EventLoop
import Foundation
@testable import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

/// The faults on a connection's whole TCP path (docs/PROTOCOL.md, 12.7, "Latency",
/// "Slow close") and the `upgrade` fault counted per device, measured over real
/// sockets on the virtual clock.
@Suite("Path faults")
struct PathFaultTests {
    /// Runs the loop until `done`, advancing the virtual clock 1 ms at a time (at most
    /// `limit` ms); the time it took.
    static func millisecondsUntil(_ f: ServerFixture, limit: Int64 = 10_000, _ done: () -> Bool) -> Int64? {
        f.settle()
        let start = f.now
        while !done() {
            guard f.now.milliseconds - start.milliseconds < limit else { return nil }
            f.advance(milliseconds: 1)
        }
        return f.now.milliseconds - start.milliseconds
    }

    @Test func latencyDelaysTheHandshakePingsAndClosesAlike() throws {
        let f = try ServerFixture()
        #expect(try f.fault(#"{"fault":"latency","ms":300}"#)?["affected"] == 0)
        var outcome: Result<WebSocket, WebSocketClient.Failure>?
        WebSocketClient.connect(on: f.loop, to: f.server.address, path: "/v1/ws", seed: 7) { outcome = $0 }
        // The request arrives 300 ms late and the 101 leaves 300 ms after that.
        let handshake = Self.millisecondsUntil(f) { outcome != nil }
        #expect(handshake == 600)
        let alice = TestClient(fixture: f, socket: try #require(outcome).get())
        let login = alice.send("login", ["uid": "alice", "authKey": "mockchat-dev-key", "deviceId": "a", "platform": "desktop"])
        #expect(Self.millisecondsUntil(f) { alice.reply(to: login) != nil } == 600)
        let ping = alice.send("ping")
        #expect(Self.millisecondsUntil(f) { alice.reply(to: ping) != nil } == 600)
        // The control API is not behind the latency.
        try f.fault(#"{"fault":"drop","uid":"alice"}"#)
        let reset = Self.millisecondsUntil(f) { alice.isClosed }
        #expect(reset == 300 && alice.closeInfo?.abnormal == "stream failed: ECONNRESET")
        #expect(f.server.trace.entries.contains { $0.text == "latency: upgrade request arrives in 300 ms" })
        MisbehaviourTests.figure("latency 300 ms: handshake \(handshake ?? -1) ms, login and ping round trips 600 ms, drop reset after \(reset ?? -1) ms")
    }

    @Test func latencyOfOneUserLeavesOthersAloneAndItsRemovalDeliversWhatItHeld() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let bob = try f.loggedIn("bob", device: "b")
        #expect(try f.fault(#"{"fault":"latency","uid":"alice","ms":250}"#)?["affected"] == 1)
        #expect(bob.request("ping") != nil)
        let ping = alice.send("ping")
        #expect(Self.millisecondsUntil(f) { alice.reply(to: ping) != nil } == 500)
        let late = alice.send("ping")
        f.advance(milliseconds: 100)
        #expect(alice.reply(to: late) == nil)
        try f.fault(#"{"fault":"latency","uid":"alice","enabled":false}"#)
        #expect(alice.reply(to: late) != nil)
        #expect(f.server.trace.entries.contains { $0.text == "latency: off, what it held crosses now" })
        #expect(try f.fault(#"{"fault":"latency","ms":10}"#)?["affected"] == 2)
        #expect(try f.faults()?["latencies"]?.arrayValue?.count == 1)
        #expect(try f.control("POST", "/control/reset").status == 200)
        #expect(try f.faults()?["latencies"]?.arrayValue?.isEmpty == true)
    }

    @Test func settleCountsOnlyWhatCrossedTheLatency() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        try f.fault(#"{"fault":"latency","uid":"alice","ms":500}"#)
        func session() -> JSONValue? { f.server.settleState["sockets"]?.arrayValue?.first }
        let ping = alice.send("ping")
        f.settle()
        // Fails before settling knew of latency: no "receiving", and the pong counted as sent at +500 ms.
        #expect(session()?["received"] == 1 && session()?["receiving"] == true)
        f.advance(milliseconds: 500)
        #expect(session()?["received"] == 2 && session()?["receiving"] == nil)
        #expect(session()?["sent"] == 1 && alice.reply(to: ping) == nil, "the pong is on its way")
        f.advance(milliseconds: 500)
        #expect(session()?["sent"] == 2 && alice.reply(to: ping) != nil)
    }

    @Test func slowCloseHoldsTheTCPCloseAfterTheHandshakeAndAnswersTheCloseLate() throws {
        let f = try ServerFixture()
        let alice = try f.rawWebSocket(login: "alice", device: "a")
        #expect(alice.messages.count == 1)
        #expect(try f.fault(#"{"fault":"slowClose","uid":"alice","holdMs":3000}"#)?["affected"] == 1)
        alice.write(ClientFrame.close(1000))
        f.settle()
        #expect(alice.frames.filter { $0.opcode == 8 }.count == 1 && !alice.ended)
        let held = Self.millisecondsUntil(f) { alice.ended }
        #expect(held == 3000)

        try f.fault(#"{"fault":"slowClose","uid":"bob","answerMs":2000}"#)
        let bob = try f.rawWebSocket(login: "bob", device: "b")
        bob.write(ClientFrame.close(1000))
        f.settle()
        #expect(!bob.sawCloseFrame)
        let answered = Self.millisecondsUntil(f) { bob.sawCloseFrame }
        #expect(answered == 2000)
        f.settle()
        #expect(bob.ended)
        #expect(f.server.trace.entries.contains { $0.text == "slow close: the TCP close after the closing handshake held 3000 ms" })
        #expect(f.server.trace.entries.contains { $0.text == "slow close: the answer to the peer's close held 2000 ms" })

        // A reset lets a held close go at once.
        try f.fault(#"{"fault":"slowClose","holdMs":60000}"#)
        let carol = try f.rawWebSocket(login: "carol", device: "c")
        carol.write(ClientFrame.close(1000))
        f.advance(milliseconds: 10)
        #expect(!carol.ended)
        #expect(try f.control("POST", "/control/reset").status == 200)
        f.settle()
        #expect(carol.ended)
        MisbehaviourTests.figure("slowClose: TCP close \(held ?? -1) ms after the handshake (holdMs 3000); close answered after \(answered ?? -1) ms (answerMs 2000)")
    }

    @Test func theNthLoginOfADeviceIsResetOrHeld() throws {
        let f = try ServerFixture()
        try f.fault(#"{"fault":"upgrade","deviceId":"phone","answer":"reset","attempt":2}"#)
        var outcomes: [String] = []
        for _ in 1...3 {
            let client = try f.connect()
            let reply = client.login(uid: "alice", device: "phone")
            f.settle()
            outcomes.append(reply?.resultObject != nil ? "ok" : client.closeInfo?.abnormal ?? "open")
            client.close()
            f.settle()
        }
        // Another device's logins are not counted.
        #expect(try f.loggedIn("alice", device: "laptop").isClosed == false)
        #expect(outcomes == ["ok", "stream failed: ECONNRESET", "ok"])

        try f.fault(#"{"fault":"upgrade","uid":"bob","answer":"never"}"#)
        let bob = try f.connect()
        #expect(bob.login(uid: "bob", device: "b") == nil && !bob.isClosed)
        f.advance(seconds: 20)
        #expect(bob.messages.isEmpty)
        #expect(f.server.trace.entries.contains { $0.text == "upgrade: login attempt 2 of alice/phone reset" })
        #expect(try f.control("POST", "/control/reset").status == 200)
        #expect(try f.faults()?["loginUpgrades"]?.arrayValue?.isEmpty == true)
        MisbehaviourTests.figure("upgrade per device: logins of one device \(outcomes); answer never: no reply in 20 s")
    }
}
