import ChatProtocol
import EventLoop
import Foundation
@testable import MockChatServer
import MockChatTestSupport
import Testing

/// Links for chosen frames (docs/PROTOCOL.md, 12.7, "Selected frames"), measured over
/// real sockets on the virtual clock.
@Suite("Selected frames")
struct SelectedLinkTests {
    /// What alice received, as `reply` or the event's name, in order of arrival.
    static func arrivals(_ client: TestClient) -> [String] {
        client.messages.map { $0.isEvent ? ($0.json["event"]?.stringValue ?? "?") : "reply" }
    }

    @Test func aHeldReplyArrivesAfterTheEventsSentMeanwhileWhenItsLinkIsRemoved() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        try f.fault(#"{"fault":"link","uid":"alice","frames":{"reply":"users.get"},"hold":true}"#)
        let asked = alice.send("users.get", ["uid": "bob"])
        f.settle()
        _ = try f.loggedIn("bob", device: "b")
        f.advance(seconds: 10)
        #expect(Self.arrivals(alice) == ["user.online"], "the reply is held, the event went past it")
        #expect(alice.request("ping") != nil, "other replies flow too")
        try f.fault(#"{"fault":"link","uid":"alice","frames":{"reply":"users.get"},"enabled":false}"#)
        f.settle()
        #expect(Self.arrivals(alice) == ["user.online", "reply", "reply"])
        #expect(alice.messages.last?.requestID == asked)
        #expect(alice.messages.last?.resultUser?.status == .offline,
                "the snapshot from before bob's login arrives after his user.online, as in a presence race")
        #expect(f.server.trace.entries.contains { $0.text == "link out: chosen frame held until the link is removed" })
        #expect(f.server.trace.entries.contains { $0.text == "link: 1 held chosen frame(s) released" })
    }

    @Test func aDelayedReplyLeavesAtItsTimeWhileEventsGoPast() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        try f.fault(#"{"fault":"link","uid":"alice","frames":{"reply":"users.get"},"delayMs":500,"times":1}"#)
        let sent = f.now
        let first = alice.send("users.get", ["uid": "bob"])
        f.settle()
        _ = try f.loggedIn("bob", device: "b")
        #expect(Self.arrivals(alice) == ["user.online"])
        MisbehaviourTests.advanceUntil(f) { alice.reply(to: first) != nil }
        #expect(f.now.milliseconds - sent.milliseconds == 500)
        #expect(Self.arrivals(alice) == ["user.online", "reply"])
        // `times: 1`: the next reply is not delayed, and the rule is gone.
        #expect(alice.request("users.get", ["uid": "bob"]) != nil)
        #expect(try f.faults()?["links"] == [])
    }

    @Test func eventsOfAKindAreDroppedOrDuplicatedAndTheDrawsRepeatForASeed() throws {
        func onlineEvents(_ link: String) throws -> Int {
            let f = try ServerFixture()
            let alice = try f.loggedIn("alice", device: "a")
            try f.fault(link)
            for round in 0..<20 {
                let bob = try f.loggedIn("bob", device: "b\(round)")
                bob.close()
                f.settle()
            }
            #expect(alice.presence.filter { $0.event == "user.offline" }.count == 20, "other events are untouched")
            return alice.presence.filter { $0.event == "user.online" }.count
        }
        #expect(try onlineEvents(#"{"fault":"link","uid":"alice","frames":{"event":"user.online"},"dropPercent":100}"#) == 0)
        #expect(try onlineEvents(#"{"fault":"link","uid":"alice","frames":{"event":"user.online"},"duplicate":true}"#) == 40)
        let share = #"{"fault":"link","uid":"alice","frames":{"event":"user.online"},"dropPercent":50,"seed":9}"#
        let kept = try onlineEvents(share)
        #expect(kept > 0 && kept < 20)
        #expect(try onlineEvents(share) == kept, "the same seed drops the same events")
        MisbehaviourTests.figure("chosen frames: user.online with dropPercent 50, seed 9: \(kept) of 20 kept")
    }

    @Test func aRequestOfAnOpIsReadLateWhileLaterRequestsAreAnswered() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        try f.fault(#"{"fault":"link","uid":"alice","direction":"in","frames":{"op":"users.get"},"delayMs":1000}"#)
        let slow = alice.send("users.get", ["uid": "bob"])
        let ping = alice.send("ping")
        f.settle()
        #expect(alice.reply(to: ping) != nil && alice.reply(to: slow) == nil)
        f.advance(seconds: 1)
        #expect(alice.messages.map(\.requestID) == [ping, slow], "reordered: the ping's reply came first")
    }
}
