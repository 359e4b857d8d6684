import ChatProtocol
import EventLoop
import Foundation
@testable import MockChatServer
import MockChatTestSupport
import Testing

/// The `cut` fault (docs/PROTOCOL.md, 12.7, "Cuts"), measured over real sockets on the
/// virtual clock.
@Suite("Cut fault")
struct CutFaultTests {
    @Test func afterTimeTheConnectionIsResetAndAfterBytesItEndsWithoutACloseFrame() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let bob = try f.loggedIn("bob", device: "b")
        let set = f.now
        #expect(try f.fault(#"{"fault":"cut","uid":"alice","afterMs":5000}"#)?["affected"] == 1)
        f.advance(seconds: 4.999)
        #expect(!alice.isClosed)
        f.advance(milliseconds: 1)
        #expect(f.loop.run(timeout: 5) { alice.isClosed })
        #expect(alice.closeInfo?.abnormal == "stream failed: ECONNRESET" && alice.closedAt == set.advanced(by: 5_000))
        #expect(bob.presence.last?.event == "user.offline")

        try f.fault(#"{"fault":"cut","uid":"carol","afterBytes":200,"how":"end"}"#)
        let carol = try f.loggedIn("carol", device: "c")
        var pongs = 0
        while !carol.isClosed, pongs < 50 {
            if carol.request("ping") != nil { pongs += 1 }
            f.settle()
        }
        #expect(carol.isClosed && carol.closeInfo?.received == nil && carol.closeInfo?.abnormal == "peer closed the stream")
        #expect(f.server.trace.entries.contains { $0.text?.hasPrefix("cut after 2") == true && $0.text?.hasSuffix(": end") == true })
        MisbehaviourTests.figure("cut: afterMs 5000 reset at +\(alice.closedAt!.milliseconds - set.milliseconds) ms; "
                                 + "afterBytes 200 end after \(pongs) ping round trips")
    }

    @Test func aCutBySilenceLeavesTheSocketOpenAndSilent() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        try f.fault(#"{"fault":"cut","uid":"alice","afterMs":1000,"how":"silence"}"#)
        f.advance(seconds: 1)
        #expect(try f.faults()?["silences"]?.arrayValue?.first?["connection"] == "c1")
        let ping = alice.send("ping")
        f.settle()
        #expect(alice.reply(to: ping) == nil && !alice.isClosed)
        try f.fault(#"{"fault":"cut","afterMs":0}"#)
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"cut","afterBytes":5,"afterMs":5}"#).json?["error"]
                == "cut needs exactly one of 'afterBytes' (text-frame bytes both ways) and 'afterMs'")
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"cut","afterMs":5,"how":"fin"}"#).status == 400)
    }
}
