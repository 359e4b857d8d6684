import ChatProtocol
import EventLoop
import Foundation
@testable import MockChatServer
import MockChatTestSupport
import Testing

/// The trace holds what a replay needs: who sent each frame, every fault's parameters,
/// fixture contents and clock moves, under a format version.
@Suite struct TraceReplayTests {
    private func lines(_ f: ServerFixture) throws -> [JSONValue] {
        try f.control("GET", "/control/trace").text.split(separator: "\n").map { try JSONParser.parse(String($0)) }
    }

    @Test func loginFramesAndRefusedLoginsCarryTheClaimedUser() throws {
        let f = try ServerFixture()
        let mallory = try f.connect()
        _ = mallory.login(uid: "alice", device: "m-phone", authKey: "wrong-key")
        let alice = try f.loggedIn("alice", device: "a")
        _ = alice.request("ping")
        let entries = try lines(f)
        let afterOpen = entries.filter { $0["kind"] != "open" }
        for entry in afterOpen {
            #expect(entry["uid"] == "alice", "no uid on \(entry.serialized())")
            #expect(entry["device"] != nil, "no device on \(entry.serialized())")
        }
        let refusedClose = entries.first { $0["kind"] == "close" && $0["conn"] == "c1" }
        #expect(refusedClose?["device"] == "m-phone")
        #expect(entries.first { $0["kind"] == "in" && $0["conn"] == "c2" }?["device"] == "a")
        #expect(entries.contains { $0["frame"]?["authKey"] == "wrong-key" } == false, "secrets stay out")
    }

    @Test func controlEntriesCarryTheirParameters() throws {
        let f = try ServerFixture()
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"delay","ms":250,"uid":"bob"}"#).status == 200)
        #expect(try f.control("POST", "/control/fixtures", body: #"{"app":{"heartbeatTimeout":20}}"#).status == 200)
        #expect(try f.control("POST", "/control/clock/advance", body: #"{"seconds":1.5}"#).status == 200)
        let control = try lines(f).filter { $0["kind"] == "control" }
        #expect(control.count == 3)
        #expect(control[0]["frame"] == ["fault": "delay", "ms": 250, "uid": "bob"])
        #expect(control[1]["frame"]?["app"]?["heartbeatTimeout"]?.doubleValue == 20)
        #expect(control[1]["frame"]?["users"]?.arrayValue?.isEmpty == false)
        #expect(control[1]["frame"]?["app"]?["authKey"] == .string(TraceLog.redacted))
        #expect(control[2]["frame"] == ["ms": 1500])
        #expect(control.map { $0["route"]?.stringValue } == ["POST /control/faults", "POST /control/fixtures",
                                                            "POST /control/clock/advance"])
        #expect(try f.control("GET", "/control/trace").headerValues("X-Trace-Format") == ["\(TraceLog.formatVersion)"])
    }

    @Test func aTraceFileStartsWithAVersionedHeaderAndLongLoadsGoBesideIt() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString).jsonl").path
        defer {
            let folder = FileManager.default.temporaryDirectory.path
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                where name.hasPrefix(String(path.split(separator: "/").last!)) {
                try? FileManager.default.removeItem(atPath: folder + "/" + name)
            }
        }
        let f = try ServerFixture(trace: try TraceLog(path: path))
        let users = (0..<60).map { #"{"uid":"user\#($0)","name":"User number \#($0) with a long name","authToken":"t\#($0)"}"# }
        #expect(try f.control("POST", "/control/fixtures", body: #"{"users":[\#(users.joined(separator: ","))]}"#).status == 200)
        let fileLines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(fileLines[0]["format"] == "mockchat-trace")
        #expect(fileLines[0]["version"] == .integer(Int64(TraceLog.formatVersion)))
        #expect(fileLines[0]["mockchat"]?["version"] == .string(BuildInfo.version))
        #expect(fileLines[0]["mockchat"]?["commit"] == .string(BuildInfo.commit))
        #expect(fileLines[0]["fixtures"]?["users"]?.arrayValue?.isEmpty == false)
        let reference = try #require(fileLines[1]["frame"]?["file"]?.stringValue)
        let folder = String(path[..<path.lastIndex(of: "/")!])
        let attached = try JSONParser.parse(try String(contentsOfFile: folder + "/" + reference, encoding: .utf8))
        #expect(attached["users"]?.arrayValue?.count == 60)
        #expect(attached["users"]?.arrayValue?.first?["authToken"] == .string(TraceLog.redacted))
    }

    @Test func aRecordingWritesLongFramesWholeWhereMemoryKeepsTheirSummary() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("record-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let f = try ServerFixture(trace: try TraceLog(path: path, wholeFrames: true))
        let client = try f.connect()
        let padding = String(repeating: "x", count: 6_000)
        client.send(text: #"{"id":1,"op":"ping","padding":"\#(padding)"}"#)
        f.settle()
        let written = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(written.last { $0["kind"] == "in" }?["frame"]?["padding"]?.stringValue == padding)
        #expect(try lines(f).last { $0["kind"] == "in" }?["frame"]?["summarized"] == true)
    }
}
