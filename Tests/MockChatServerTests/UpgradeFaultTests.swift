import ChatProtocol
import EventLoop
import Foundation
@testable import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

/// The `upgrade` fault (docs/PROTOCOL.md, 12.7, "Upgrades"): how new WebSocket
/// upgrades are answered, measured over real sockets on the virtual clock.
@Suite("Upgrade fault")
struct UpgradeFaultTests {
    /// One upgrade attempt on a raw connection, once the server has answered, reset
    /// or (after `wait`) not answered it.
    static func attempt(_ f: ServerFixture) throws -> RawConnection {
        let raw = try f.rawConnect()
        raw.write(Array(handshakeRequest().utf8))
        f.settle()
        _ = f.loop.run(timeout: 5) { raw.reply?.status == 101 || raw.isClosed }
        return raw
    }

    @Test func aStatusWithRetryAfterAndBodyThenUpgradesGoThroughAgain() throws {
        let f = try ServerFixture()
        try f.fault(#"{"fault":"upgrade","status":503,"retryAfter":5,"body":"maintenance\n","times":2}"#)
        for _ in 0..<2 {
            let raw = try Self.attempt(f)
            #expect(raw.reply?.status == 503)
            #expect(raw.reply?.headerValues("Retry-After") == ["5"])
            #expect(raw.reply.map { String(decoding: $0.body, as: UTF8.self) } == "maintenance\n")
            #expect(raw.isClosed)
        }
        #expect(try Self.attempt(f).reply?.status == 101, "times: 2 answered two attempts")
        #expect(try f.faults()?["upgrade"] == .null)
        try f.fault(#"{"fault":"upgrade","status":401}"#)
        let refused = try Self.attempt(f)
        #expect(refused.reply?.status == 401 && refused.reply?.json?["error"] == "upgrade refused by a fault")
        #expect(f.server.trace.entries.contains { $0.kind == .fault && $0.text == "upgrade: attempt 1 answered 401" })
    }

    @Test func resetAndNeverAreTheTwoWaysNotToAnswer() throws {
        let f = try ServerFixture()
        try f.fault(#"{"fault":"upgrade","answer":"reset"}"#)
        let reset = try Self.attempt(f)
        #expect(reset.reply == nil && reset.endError?.name == "ECONNRESET", "\(String(describing: reset.endError))")
        try f.fault(#"{"fault":"upgrade","answer":"never"}"#)
        let hung = try Self.attempt(f)
        f.advance(seconds: 60)
        #expect(hung.received.isEmpty && !hung.isClosed, "no answer, no close, past the 10 s handshake deadline")
        let held = f.server.sessionCounts.filter(\.held)
        #expect(held.count == 1 && held[0].port != 0 && !held[0].isOpen, "a settle lists the held upgrade by its client's port")
        try f.clearFaults()
        #expect(f.loop.run(timeout: 5) { hung.isClosed })
        #expect(hung.received.isEmpty && hung.endError?.name == "ECONNRESET", "cleared: the held upgrade is reset")
        #expect(f.server.sessionCounts.filter(\.held).isEmpty)
        #expect(try Self.attempt(f).reply?.status == 101)
    }

    /// A held upgrade stands for its client's opening socket in a settle, matched by port;
    /// once that client gave up, the port may belong to another socket, so it is not listed.
    @Test func aHeldUpgradeWhoseClientGaveUpIsNoLongerListed() throws {
        let f = try ServerFixture()
        try f.fault(#"{"fault":"upgrade","answer":"never"}"#)
        let hung = try Self.attempt(f)
        #expect(f.server.sessionCounts.filter(\.held).count == 1)
        hung.close()
        #expect(f.loop.run(timeout: 5) { f.server.sessionCounts.isEmpty }, "\(f.server.sessionCounts)")
    }

    /// The client's side of the same: an attempt its owner cancels while the upgrade is
    /// held ends, and no longer counts among the loop's opening sockets.
    @Test func aCancelledAttemptLeavesTheClientsCounts() throws {
        let f = try ServerFixture()
        try f.fault(#"{"fault":"upgrade","answer":"never"}"#)
        var outcome: Result<WebSocket, WebSocketClient.Failure>?
        let attempt = WebSocketClient.connect(on: f.loop, to: f.server.address, seed: 7) { outcome = $0 }
        #expect(f.loop.run(timeout: 5) { f.server.sessionCounts.contains(where: \.held) })
        #expect(f.loop.clientSockets.counts.count == 1)
        attempt.cancel()
        #expect(f.loop.run(timeout: 5) { outcome != nil && f.server.sessionCounts.isEmpty })
        #expect(f.loop.clientSockets.counts.isEmpty, "\(f.loop.clientSockets.counts)")
    }

    @Test func theNthAttemptOrASeededShare() throws {
        let f = try ServerFixture()
        try f.fault(#"{"fault":"upgrade","status":429,"attempt":2}"#)
        let statuses = try (0..<3).map { _ in try Self.attempt(f).reply?.status }
        #expect(statuses == [101, 429, 101])

        func refused(seed: Int) throws -> [Int] {
            let g = try ServerFixture()
            try g.fault(#"{"fault":"upgrade","status":500,"sharePercent":30,"seed":\#(seed)}"#)
            return try (0..<20).filter { _ in try Self.attempt(g).reply?.status == 500 }
        }
        let first = try refused(seed: 4)
        #expect(!first.isEmpty && first.count < 20)
        #expect(try refused(seed: 4) == first, "the same seed refuses the same attempts")
        MisbehaviourTests.figure("upgrade: sharePercent 30, seed 4: attempts \(first) of 0-19 answered 500")
    }
}
