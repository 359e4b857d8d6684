import ChatProtocol
import ConformanceHarness
import Testing
@testable import TraceReplay

/// Shrinking keeps the fewest recorded actions that still show the observation.
@Suite struct RecordingShrinkerTests {
    /// Forty desktop logins of six users, one connection each; alice (subscribed to
    /// everyone) logs in third, bob fifth.
    static func recording() throws -> Recording {
        var lines = [#"{"format":"mockchat-trace","version":1,"clock":"virtual","start":1700000000.0,"fixtures":{}}"#]
        let users = ["carol", "dave", "alice", "erin", "bob", "frank"]
        for index in 0..<40 {
            let uid = users[index % users.count], conn = "c\(index + 1)", seconds = 1_700_000_000 + index
            lines.append(#"{"seq":\#(2 * index + 1),"t":\#(seconds).0,"kind":"open","conn":"\#(conn)"}"#)
            lines.append(#"{"seq":\#(2 * index + 2),"t":\#(seconds).0,"kind":"in","conn":"\#(conn)","uid":"\#(uid)","device":"d\#(index)","frame":{"id":1,"op":"login","uid":"\#(uid)","authKey":"<redacted>","deviceId":"d\#(index)","platform":"desktop"}}"#)
        }
        return try RecordingReader.read(try TraceFile.parse(lines.joined(separator: "\n") + "\n", path: "t.jsonl"))
    }

    @Test func aLongRecordingShrinksToTheLoginsThatShowTheEvent() throws {
        let observation = try ScenarioLoader.assertions(yaml: "alice.frames: {event: user.online, user.uid: bob}")
        let outcome = try RecordingShrinker(recording: try Self.recording(), observation: observation, budgetSeconds: 60).shrink()
        #expect(outcome.actionsBefore == 80)
        #expect(outcome.actionsAfter == 4)
        #expect(outcome.steps.map(\.description) == [
            #"{"wire":"alice"}"#,
            #"{"alice.send":{"id":1,"op":"login","uid":"alice","authKey":"mockchat-dev-key","deviceId":"d2","platform":"desktop"}}"#,
            #"{"wire":"bob"}"#,
            #"{"bob.send":{"id":1,"op":"login","uid":"bob","authKey":"mockchat-dev-key","deviceId":"d4","platform":"desktop"}}"#,
            #"{"expect":{"alice.frames":{"event":"user.online","user.uid":"bob"}}}"#,
        ], "the waits before and between the logins are not needed")
    }

    @Test func anObservationTheRecordingDoesNotShowIsRefused() throws {
        let observation = try ScenarioLoader.assertions(yaml: "alice.frames: {event: user.online, user.uid: nobody}")
        #expect(throws: ScenarioError.self) {
            try RecordingShrinker(recording: try Self.recording(), observation: observation).shrink()
        }
    }
}
