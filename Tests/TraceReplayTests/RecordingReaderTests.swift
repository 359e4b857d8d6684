import ChatProtocol
import ConformanceHarness
import Testing
@testable import TraceReplay

/// Traces become steps: entries to actions at their times, what the server sent to
/// expectations, control requests to the steps that issue them again.
@Suite struct RecordingReaderTests {
    static let header = #"{"format":"mockchat-trace","version":1,"clock":"virtual","start":1700000000.0,"fixtures":{}}"#

    func steps(_ entries: [String]) throws -> [String] {
        let trace = try TraceFile.parse(([Self.header] + entries).joined(separator: "\n") + "\n", path: "t.jsonl")
        return try RecordingReader.read(trace).steps().map(\.description)
    }

    @Test func aSessionBecomesSendsAndNumberedFrames() throws {
        let steps = try steps([
            #"{"seq":1,"t":1700000000.0,"kind":"open","conn":"c1","text":"127.0.0.1"}"#,
            #"{"seq":2,"t":1700000000.0,"kind":"in","conn":"c1","uid":"bob","device":"p","frame":{"id":1,"op":"login","uid":"bob","authKey":"<redacted>","deviceId":"p"}}"#,
            #"{"seq":3,"t":1700000000.0,"kind":"out","conn":"c1","uid":"bob","device":"p","frame":{"id":1,"result":{"user":{"uid":"bob","status":"online","lastActiveAt":1700000000.0},"connectionId":"c1","serverTime":1700000000.0}}}"#,
            #"{"seq":4,"t":1700000030.0,"kind":"close","conn":"c1","uid":"bob","device":"p","code":4002,"text":"server closes: no frame within the heartbeat timeout"}"#,
        ])
        #expect(steps == [
            #"{"wire":"bob"}"#,
            #"{"bob.send":{"id":1,"op":"login","uid":"bob","authKey":"mockchat-dev-key","deviceId":"p"}}"#,
            #"{"expect":{"bob.frames":[{"nth":1,"id":1,"result.user.uid":"bob","result.user.status":"online","result.connectionId":{"type":"string"},"result.serverTime":{"type":"number"}}]}}"#,
            #"{"advance":"30s"}"#,
            #"{"expect":{"server.closed":[{"by":"server","code":4002,"uid":"bob","device":"p","at":30.0}],"bob.closeCode":4002,"bob.open":false}}"#,
            #"{"expect":{"bob.frames":{"count":1},"bob.open":false}}"#,
        ])
    }

    /// Found by `mockchat fuzz --mode inputs` (seed 20261127, input 6838, shrunk from 11,067
    /// to 2,685 bytes): a uid of 5,000 characters named a client with a YAML key past 1,024
    /// characters, and the written scenario did not load ("mapping values are not allowed").
    @Test func aLongUidNamesAClientTheWrittenScenarioCanHold() throws {
        let uid = String(repeating: "é", count: 5_000)
        let trace = try TraceFile.parse(([Self.header,
            #"{"seq":1,"t":1700000000.0,"kind":"open","conn":"c1"}"#,
            #"{"seq":2,"t":1700000000.0,"kind":"in","conn":"c1","uid":"\#(uid)"}"#,
        ]).joined(separator: "\n") + "\n", path: "t.jsonl")
        let recording = try RecordingReader.read(trace)
        let yaml = recording.yaml(id: "regressions/fuzz", title: "fuzz", source: "fuzz", steps: recording.steps(), comments: [])
        _ = try ScenarioLoader.load(yaml, path: "<output>")
        #expect(RecordingReader.wireName(uid).count == 65, "u and 64 characters")
    }

    @Test func aTokenLoginIsNamedAfterTheUserTheServerCredits() throws {
        let steps = try steps([
            #"{"seq":1,"t":1700000000.0,"kind":"open","conn":"c1","text":"127.0.0.1"}"#,
            #"{"seq":2,"t":1700000000.0,"kind":"in","conn":"c1","uid":"","device":"p","frame":{"id":1,"op":"login","token":"<redacted>","deviceId":"p"}}"#,
            #"{"seq":3,"t":1700000000.0,"kind":"out","conn":"c1","uid":"bob","device":"p","frame":{"id":1,"result":{"user":{"uid":"bob","status":"online","lastActiveAt":1700000000.0},"connectionId":"c1","serverTime":1700000000.0}}}"#,
            #"{"seq":4,"t":1700000000.0,"kind":"open","conn":"c2","text":"127.0.0.1"}"#,
            #"{"seq":5,"t":1700000000.0,"kind":"in","conn":"c2","uid":"bob","device":"q","frame":{"id":1,"op":"login","uid":"bob","authKey":"<redacted>","deviceId":"q"}}"#,
        ])
        #expect(steps[0] == #"{"wire":"bob"}"#)
        #expect(steps[1] == #"{"bob.send":{"id":1,"op":"login","token":"bob-token","deviceId":"p"}}"#)
        #expect(steps[3] == #"{"wire":"bob-2"}"#)
    }

    @Test func aRefusedKeyStaysRedactedSoTheReplayIsRefusedToo() throws {
        let steps = try steps([
            #"{"seq":1,"t":1700000000.0,"kind":"open","conn":"c1","text":"127.0.0.1"}"#,
            #"{"seq":2,"t":1700000000.0,"kind":"in","conn":"c1","uid":"bob","device":"p","frame":{"id":1,"op":"login","uid":"bob","authKey":"<redacted>","deviceId":"p"}}"#,
            #"{"seq":3,"t":1700000000.0,"kind":"out","conn":"c1","uid":"bob","device":"p","frame":{"id":1,"error":{"errorCode":"ERR_AUTH_FAILED","errorDescription":"x"}}}"#,
        ])
        #expect(steps[1].contains(#""authKey":"<redacted>""#))
        #expect(steps[2].contains(#""error.errorCode":"ERR_AUTH_FAILED""#))
        #expect(!steps[2].contains("errorDescription"))
    }

    @Test func controlRequestsBecomeTheStepsThatIssueThemAndAClockAdvanceIsTime() throws {
        let steps = try steps([
            #"{"seq":1,"t":1700000000.0,"kind":"control","uid":"bob","route":"POST /control/faults","frame":{"fault":"delay","ms":250,"uid":"bob"},"text":"fault delay on"}"#,
            #"{"seq":2,"t":1700000001.5,"kind":"control","route":"POST /control/clock/advance","frame":{"ms":1500},"text":"clock advanced 1500 ms, 0 timers fired"}"#,
            #"{"seq":3,"t":1700000001.5,"kind":"control","route":"POST /control/push","frame":{"uid":"bob","event":{"event":"x"}},"text":"push"}"#,
            #"{"seq":4,"t":1700000001.5,"kind":"control","route":"POST /control/teleport","frame":{"uid":"bob"},"text":"a route with no shorthand"}"#,
            #"{"seq":5,"t":1700000001.5,"kind":"control","route":"DELETE /control/faults","text":"faults cleared"}"#,
        ])
        #expect(steps == [
            #"{"server.fault":{"fault":"delay","ms":250,"uid":"bob"}}"#,
            #"{"advance":"1500ms"}"#,
            #"{"server.push":{"uid":"bob","event":{"event":"x"}}}"#,
            #"{"server.control":{"method":"POST","path":"/control/teleport","body":{"uid":"bob"}}}"#,
            #"{"server.clearFaults":{}}"#,
        ])
    }

    @Test func aSilenceBecomesItsStepsAndWhatItHeldIsSentWhenItArrived() throws {
        let steps = try steps([
            #"{"seq":1,"t":1700000000.0,"kind":"open","conn":"c1","text":"127.0.0.1"}"#,
            #"{"seq":2,"t":1700000000.0,"kind":"control","uid":"bob","route":"POST /control/faults","frame":{"fault":"silence","uid":"bob","newConnections":"pass"},"text":"fault silence on"}"#,
            #"{"seq":3,"t":1700000002.0,"kind":"fault","conn":"c1","frame":{"id":1,"op":"ping"},"text":"silence: inbound frame held"}"#,
            #"{"seq":4,"t":1700000005.0,"kind":"control","uid":"bob","route":"POST /control/faults","frame":{"fault":"silence","uid":"bob","enabled":false,"newConnections":"hang"},"text":"fault silence off"}"#,
            #"{"seq":5,"t":1700000005.0,"kind":"fault","conn":"c1","text":"silence lifted: 1 held frame(s) arrive"}"#,
            #"{"seq":6,"t":1700000005.0,"kind":"in","conn":"c1","frame":{"id":1,"op":"ping"}}"#,
        ])
        #expect(steps.prefix(5) == [
            #"{"wire":"c1"}"#,
            #"{"server.fault":{"fault":"silence","uid":"bob","newConnections":"pass"}}"#,
            #"{"advance":"5s"}"#,
            #"{"server.fault":{"fault":"silence","uid":"bob","enabled":false,"newConnections":"hang"}}"#,
            #"{"c1.send":{"id":1,"op":"ping"}}"#,
        ], "\(steps)")
    }

    @Test func underAFaultWhatTheServerSentIsCheckedOnItsSide() throws {
        let steps = try steps([
            #"{"seq":1,"t":1700000000.0,"kind":"open","conn":"c1","text":"127.0.0.1"}"#,
            #"{"seq":2,"t":1700000000.0,"kind":"control","uid":"bob","route":"POST /control/faults","frame":{"fault":"delay","ms":250,"uid":"bob"},"text":"fault delay on"}"#,
            #"{"seq":3,"t":1700000000.0,"kind":"in","conn":"c1","uid":"bob","device":"p","frame":{"id":1,"op":"ping"}}"#,
            #"{"seq":4,"t":1700000000.0,"kind":"out","conn":"c1","uid":"bob","device":"p","frame":{"id":1,"error":{"errorCode":"ERR_NOT_LOGGED_IN","errorDescription":"x"}}}"#,
        ])
        #expect(steps[3] == #"{"expect":{"server.sent":[{"to":"bob","device":"p","frame.id":1,"frame.error.errorCode":"ERR_NOT_LOGGED_IN","at":0.0}]}}"#)
        #expect(steps.count == 4, "no wire checks at the end: delivery may differ under the fault")
    }

    @Test func aControlEntryWithoutItsRouteIsNamed() {
        #expect(throws: TraceError.self) {
            try steps([#"{"seq":1,"t":1700000000.0,"kind":"control","frame":{"fault":"drop","uid":"bob"},"text":"fault drop on"}"#])
        }
    }

    @Test func shorthandsGoBothWays() throws {
        for (method, path, body) in [("POST", "/control/faults", JSONValue.object(JSONObject([("fault", "drop"), ("uid", "bob")]))),
                                     ("DELETE", "/control/faults", .null), ("POST", "/control/reset", .null),
                                     ("POST", "/control/fixtures", ["app": ["heartbeatTimeout": 20]]),
                                     ("POST", "/control/reset", ["clock": 1_700_000_100])] {
            let step = try ScenarioLoader.step(ServerShorthand.step(method: method, path: path, body: body), number: 1)
            guard case .control(let m, let p, let b, _) = step.action else { Issue.record("not a control step"); continue }
            #expect(m == method && p == path && b == body, "\(step.text)")
        }
    }
}
