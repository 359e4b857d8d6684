import ChatProtocol
import ConformanceHarness
import EventLoop
import Foundation
import MockChatServer
import MockChatTestSupport
import Testing
@testable import TraceReplay

/// A session recorded under the faults on a connection's path (latency, slow close, the
/// Nth login of a device) becomes steps that issue the same faults, and the scenario
/// passes on a fresh server: the recording, `from-trace` and the replay agree.
@Suite struct PathFaultRoundTripTests {
    @Test func aRecordingUnderPathFaultsReplaysAsTheSameFaults() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("path-faults-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let f = try ServerFixture(trace: try TraceLog(path: path, wholeFrames: true))
        let alice = try f.loggedIn("alice", device: "a")
        for body in [#"{"fault":"latency","uid":"alice","ms":200}"#, #"{"fault":"slowClose","uid":"alice","holdMs":1000}"#,
                     #"{"fault":"upgrade","deviceId":"phone","answer":"reset","attempt":1}"#] {
            #expect(try f.control("POST", "/control/faults", body: body).status == 200)
        }
        let ping = alice.send("ping")
        f.settle()
        f.advance(milliseconds: 400)
        #expect(alice.reply(to: ping) != nil)
        let phone = try f.connect()
        #expect(phone.login(uid: "bob", device: "phone") == nil)
        f.settle()
        #expect(phone.isClosed)
        f.advance(seconds: 1)

        let recording = try RecordingReader.read(try TraceFile.parse(try String(contentsOfFile: path, encoding: .utf8), path: path))
        let steps = recording.steps()
        let faults = steps.compactMap { $0["server.fault"]?["fault"]?.stringValue }
        // Fails before the faults existed: their control requests were refused (400) and never recorded.
        #expect(faults == ["latency", "slowClose", "upgrade"], "\(steps)")
        #expect(steps.contains { $0["server.fault"]?["holdMs"] == 1000 && $0["server.fault"]?["answerMs"] == 0 })
        let scenario = try recording.scenario(id: "regressions/path-faults-round-trip", steps: steps)
        let result = ScenarioRunner(options: CatalogueRunner.Options()).run(scenario)
        #expect(result.verdict == .passed, "\(result.message ?? "")\n\(steps.map(\.description).joined(separator: "\n"))")
    }
}
