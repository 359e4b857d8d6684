import ChatProtocol
import EventLoop
@testable import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

/// Frames a link fault holds (docs/PROTOCOL.md, 12.7): counted in the connection's
/// unsent bytes under the slow-consumer rule, bounded, delivered at once when the fault
/// is removed, and freed with their timers when the connection closes or the server
/// resets. Real sockets, virtual clock.
@Suite("HeldFrames")
struct HeldFramesTests {
    static func figure(_ text: String) { print("held frames: \(text)") }

    static func link(_ f: ServerFixture, _ direction: String, delayMs: Int, uid: String = "alice") throws {
        let body = #"{"fault":"link","uid":"\#(uid)","direction":"\#(direction)","delayMs":\#(delayMs)}"#
        try f.fault(body)
    }

    @Test func heldFramesCountTowardTheSlowConsumerRule() throws {
        let f = try ServerFixture()
        let bob = try f.loggedIn("bob", device: "b")
        let raw = try f.rawWebSocket(login: "alice")
        bob.clear()
        try Self.link(f, "out", delayMs: 60_000)
        let limit = f.server.configuration.outboundQueueLimit
        let frame = String(repeating: "x", count: 50_000)
        var pushes = 0
        var mostHeld = 0
        while pushes < 40, try f.control("GET", "/control/presence").json?["online"] == ["alice", "bob"] {
            #expect(try f.control("POST", "/control/push", body: #"{"uid":"alice","frame":"\#(frame)"}"#).status == 200)
            f.settle()
            pushes += 1
            mostHeld = max(mostHeld, f.server.outboundHeld.connections.map { f.server.outboundHeld.bytes(of: $0) }.max() ?? 0)
        }
        Self.figure("link delay 60 s, 50,000-byte pushes: cut off with 4008 after \(pushes) pushes, "
                    + "at most \(mostHeld) bytes held (limit \(limit))")
        // Fails before the held bytes were counted: 40 pushes, 2,000,000 bytes held, alice never cut off.
        #expect(pushes == limit / 50_000 + 1, "the push that takes the held bytes over 1 MiB ends the session")
        #expect(mostHeld <= limit)
        #expect(bob.presence.map(\.event) == ["user.offline"], "everybody sees alice leave at once")
        #expect(f.server.outboundHeld.connections.allSatisfy { f.server.outboundHeld.bytes(of: $0) == 0 },
                "the backlog was dropped; only the close is held")
        f.advance(seconds: 60)
        #expect(f.loop.run(timeout: 5) { raw.frames.last?.closeCode != nil })
        #expect(raw.frames.last?.closeCode == 4008, "the close leaves after the link's delay, not behind the backlog")
        #expect(raw.frames.filter { $0.text == frame }.isEmpty, "the dropped frames never arrive")
        #expect(f.server.outboundHeld.isEmpty)
    }

    @Test func heldChosenFramesCountTowardTheSlowConsumerRule() throws {
        let f = try ServerFixture()
        let raw = try f.rawWebSocket(login: "alice")
        let hold = #"{"fault":"link","uid":"alice","frames":{"event":"big"},"hold":true}"#
        try f.fault(hold)
        let limit = f.server.configuration.outboundQueueLimit
        let pad = String(repeating: "x", count: 50_000)
        var pushes = 0
        var mostHeld = 0
        while pushes < 40, try f.control("GET", "/control/presence").json?["online"] == ["alice"] {
            let push = #"{"uid":"alice","frame":"{\"event\":\"big\",\"pad\":\"\#(pad)\"}"}"#
            #expect(try f.control("POST", "/control/push", body: push).status == 200)
            f.settle()
            pushes += 1
            mostHeld = max(mostHeld, f.server.selectedHeldBytes(.outbound, ConnectionID("c1")!))
        }
        Self.figure("held chosen events of 50,024 bytes: cut off with 4008 after \(pushes) pushes, "
                    + "at most \(mostHeld) bytes held (limit \(limit))")
        // Fails before held chosen frames were counted: 40 pushes, 2,000,960 bytes held, alice never cut off.
        #expect(pushes == limit / 50_000 + 1, "the push that takes the held bytes over 1 MiB ends the session")
        #expect(mostHeld <= limit)
        #expect(f.server.selectedHolds.isEmpty, "the held chosen frames were freed")
        #expect(f.loop.run(timeout: 5) { raw.frames.last?.closeCode != nil })
        #expect(raw.frames.last?.closeCode == 4008)
        #expect(raw.frames.filter { $0.text.hasPrefix(#"{"event":"big""#) }.isEmpty, "the dropped frames never arrive")
        #expect(f.server.trace.entries.contains { $0.text == "link out: 21 held chosen frames (1050504 bytes) dropped, slow consumer" })
    }

    @Test func removingTheFaultDeliversHeldFramesAtOnceAndLaterOnesWaitForNothing() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        try Self.link(f, "both", delayMs: 30_000)
        let held = (0..<3).map { _ in alice.send("ping") }
        f.settle()
        f.advance(seconds: 40)  // read at 30 s, answered at 60 s
        #expect(held.allSatisfy { alice.reply(to: $0) == nil })
        let more = alice.send("ping")
        f.settle()
        let removed = f.now
        try f.clearFaults()
        f.settle()
        // Fails before the release: the three pongs came at 60 s, the fourth at 90 s.
        #expect((held + [more]).allSatisfy { alice.reply(to: $0) != nil }, "everything held is delivered at the removal")
        let read = alice.reply(to: more)?.resultObject?["serverTime"]?.doubleValue
        #expect(read == removed.seconds, "the held request is read at the removal")
        let sent = f.now
        let after = alice.send("ping")
        f.settle()
        #expect(alice.reply(to: after) != nil, "a ping after the removal waits for nothing")
        Self.figure("delay 30 s both ways removed at 40 s: 4 held pings answered at the removal; "
                    + "the next round trip \(f.now.milliseconds - sent.milliseconds) ms")
        #expect(f.server.outboundHeld.isEmpty && f.server.inboundHeld.isEmpty)
    }

    @Test func aClosedConnectionOrAResetFreesHeldFramesAndTheirTimers() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        _ = try f.loggedIn("carol", device: "c")
        try Self.link(f, "out", delayMs: 420_000)
        try Self.link(f, "out", delayMs: 420_000, uid: "carol")
        let timersBefore = f.loop.clock.pendingTimers
        for uid in ["alice", "carol"] {
            for _ in 0..<10 {
                #expect(try f.control("POST", "/control/push", body: #"{"uid":"\#(uid)","frame":"hello"}"#).status == 200)
            }
        }
        f.settle()
        #expect(f.loop.clock.pendingTimers == timersBefore + 20)
        alice.drop()
        #expect(f.loop.run(timeout: 5) { f.server.outboundHeld.connections.count == 1 })
        // Fails before the frames had one owner: the 10 timers stayed until 420 s.
        #expect(f.loop.clock.pendingTimers <= timersBefore + 10, "alice's 10 timers are cancelled with her connection")
        #expect(try f.control("POST", "/control/reset").status == 200)
        f.settle()
        #expect(f.server.outboundHeld.isEmpty && f.server.inboundHeld.isEmpty)
        #expect(f.loop.clock.nextDeadline.map { $0 < f.now.advanced(by: 60_000) } ?? true,
                "no timer of a held frame is left")
        Self.figure("20 frames held for 420 s: \(timersBefore + 20) timers, "
                    + "\(f.loop.clock.pendingTimers) after a close and a reset")
    }

    @Test func aConnectionIsNotReadWhileItsInboundLinkHoldsTooMuch() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        try Self.link(f, "in", delayMs: 10_000)
        let limit = f.server.configuration.outboundQueueLimit
        let id = String(repeating: "i", count: 50_000)
        // While reading is paused the client's bytes stay in the kernel, so the loop
        // cannot settle: wait for whichever comes first.
        let caughtUp = { f.loop.traffic.isSettled || !f.server.readingPaused.isEmpty }
        for _ in 0..<40 { alice.send(text: #"{"id":"\#(id)","op":"ping"}"#) }
        #expect(f.loop.run(timeout: 10, until: caughtUp))
        let held = f.server.inboundHeld.connections.map { f.server.inboundHeld.bytes(of: $0) }.max() ?? 0
        Self.figure("inbound delay 10 s, 40 pings of 50 KB sent at once: \(held) bytes held (limit \(limit)), "
                    + "reading paused: \(!f.server.readingPaused.isEmpty)")
        // Fails before the cap: all 2,000,000 bytes held.
        #expect(held <= limit + 64 * 1024, "reading stops past the limit, as a full window would")
        #expect(!f.server.readingPaused.isEmpty)
        var steps = 0
        while alice.messages.count < 40, steps < 200, let next = f.loop.clock.nextDeadline {
            f.loop.clock.advance(to: next) { _ = f.loop.run(timeout: 5, until: caughtUp) }
            _ = f.loop.run(timeout: 5) { f.loop.traffic.isSettled || alice.messages.count == 40 || !f.server.readingPaused.isEmpty }
            steps += 1
        }
        #expect(alice.messages.count == 40, "reading resumes as the link drains; every ping is answered")
        #expect(f.server.readingPaused.isEmpty)
    }
}
