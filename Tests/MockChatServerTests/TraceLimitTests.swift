import ChatProtocol
import EventLoop
@testable import MockChatServer
import MockChatTestSupport
import Testing

/// The trace's memory is bounded in bytes, long frames are summarised, a reset gives
/// the memory back, and the control API serves it in pages.
@Suite("Trace limits")
struct TraceLimitTests {
    @Test func keptBytesStayUnderTheLimit() throws {
        let trace = try TraceLog(capacity: 1_000_000, byteLimit: 20_000)
        for index in 0..<5_000 {
            trace.record(.in, time: Instant(milliseconds: Int64(index)), frame: ["id": .integer(Int64(index)), "op": "ping"])
        }
        #expect(trace.keptBytes <= 20_000)
        #expect(trace.keptBytes > 15_000)
        #expect(trace.entries.last?.sequence == 5_000)
        // Kept entries are the newest, consecutive.
        let kept = trace.entries.map(\.sequence)
        #expect(kept == Array((5_001 - kept.count)...5_000))
    }

    @Test func keptBytesAreTheLengthOfTheKeptLines() throws {
        let trace = try TraceLog(capacity: 1_000, byteLimit: 1 << 20)
        let long = String(repeating: "é\"", count: 3_000)
        trace.record(.open, time: Instant(milliseconds: 1), connection: ConnectionID(1), text: "127.0.0.1")
        trace.record(.in, time: Instant(milliseconds: 1_500), connection: ConnectionID(12), uid: "al\nice", deviceId: "d\u{1}",
                     frame: ["id": 7, "op": "login", "token": "secret", "deep": [1.5, nil, true, ["x": -3]]])
        trace.record(.out, time: Instant(milliseconds: 123_456_789), connection: ConnectionID(12), frame: ["big": .string(long)])
        trace.record(.close, time: Instant(milliseconds: 2), connection: ConnectionID(12), text: "closed: \"bye\"", code: 4001)
        trace.controlRoute = "POST /control/faults"
        trace.record(.control, time: Instant(milliseconds: 3), frame: ["rules": []], text: String(repeating: "t", count: 2_000))
        trace.record(.fault, time: Instant(milliseconds: 4), connection: ConnectionID(3), frame: [:], text: "")
        #expect(trace.entries.first(where: { $0.kind == .out })?.frame?["summarized"] == true)
        #expect(trace.keptBytes >= TraceLog.jsonLines(trace.entries).count, "memory counts at least the lines' bytes")
        #expect(trace.keptBytes < 2 * TraceLog.jsonLines(trace.entries).count + 6 * 256)
    }

    /// Pings carrying arrays of 2,000 zeros: 4 KB of JSON each, but as a tree of parsed
    /// values many times that. The cap counted JSON bytes while the trace held the trees,
    /// so 64 MiB of "trace" took 1.4 GiB (issue 26, defect 4). Each frame is now kept as
    /// its JSON text, and the cap counts that text with the entry and allocator overhead.
    @Test func framesAreKeptAsTheirTextAndTheCapCountsTheirMemory() throws {
        let limit = 1 << 20
        let trace = try TraceLog(capacity: 1_000_000, byteLimit: limit)
        let frame: JSONValue = ["id": 1, "op": "ping", "data": .array((0..<2_000).map { _ in .integer(0) })]
        for index in 0..<400 { trace.record(.in, time: Instant(milliseconds: Int64(index)), frame: frame) }
        let text = try #require(trace.entries.last?.frameText)
        #expect(text == Array(frame.serialized().utf8), "the stored form is the frame's compact JSON")
        #expect(trace.entries.last?.frame == frame, "and reads back as the frame")
        #expect(trace.keptBytes <= limit)
        #expect(trace.keptBytes >= trace.entries.count * (text.count + MemoryLayout<TraceStore.Record>.stride))
    }

    @Test func aLongFrameIsKeptAsLengthPrefixAndHash() throws {
        let trace = try TraceLog()
        let id = String(repeating: "x", count: 65_000)
        trace.record(.in, time: Instant(milliseconds: 0), frame: ["id": .string(id), "op": "ping"])
        trace.record(.in, time: Instant(milliseconds: 0), frame: ["id": .string(id), "op": "ping"])
        let frame = try #require(trace.entries.first?.frame)
        #expect(frame["summarized"] == true)
        #expect(frame["bytes"]?.intValue == 65_021)
        #expect(frame["prefix"]?.stringValue?.hasPrefix(#"{"id":"xxx"#) == true)
        #expect(frame["fnv1a64"]?.stringValue?.count == 16)
        #expect(trace.entries.last?.frame == frame, "the same frame gives the same summary")
        #expect(trace.keptBytes < 1_500)
    }

    @Test func clearGivesBackEverythingAndNumberingGoesOn() throws {
        let trace = try TraceLog()
        for index in 0..<100 { trace.record(.control, time: Instant(milliseconds: Int64(index)), text: "e") }
        trace.clear()
        #expect(trace.entries.isEmpty)
        #expect(trace.keptBytes == 0)
        trace.record(.control, time: Instant(milliseconds: 0), text: "after")
        #expect(trace.entries.map(\.sequence) == [101])
        #expect(trace.entries(after: 0, limit: 5).map(\.sequence) == [101])
        #expect(trace.entries(after: .max).isEmpty)
    }

    @Test func theControlAPIServesTheTraceInPagesAndResetEmptiesIt() throws {
        let f = try ServerFixture()
        let alice = try f.connect()
        _ = alice.login(uid: "alice", device: "a", platform: .desktop, presence: .none)
        for _ in 0..<30 { _ = alice.request("ping") }
        let total = f.server.trace.lastSequence
        var seen: [Int64] = []
        var since = 0
        while true {
            let page = try f.control("GET", "/control/trace?since=\(since)&limit=7")
            #expect(page.status == 200)
            let sequences = page.text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0))["seq"]?.intValue }
            #expect(sequences.count <= 7)
            seen += sequences
            guard sequences.count == 7 else { break }
            #expect(page.headerValues("X-Trace-Last-Seq") == [String(sequences.last!)])
            since = Int(sequences.last!)
        }
        #expect(seen == Array(1...Int64(total)))
        #expect(try f.control("GET", "/control/trace?limit=20001").status == 400)
        #expect(try f.control("GET", "/control/trace?since=-3").status == 400)
        #expect(try f.control("POST", "/control/reset").status == 200)
        #expect(f.server.trace.entries.first?.text == "reset")
        #expect(f.server.trace.entries.count <= 2, "the reset and alice's close")
    }

    /// Entries are kept as a plain record and their strings' and frame's bytes; every
    /// field reads back as it was recorded, with the frame as its compact text.
    @Test func everyFieldReadsBackAsRecorded() throws {
        let trace = try TraceLog(capacity: 100)
        let frame: JSONValue = ["id": 3, "op": "ping"]
        trace.record(.in, time: Instant(milliseconds: 1_500), connection: ConnectionID(7), uid: "élodie", deviceId: "",
                     frame: frame)
        Array(#"{"id":4,"op":"ping"}"#.utf8).withUnsafeBytes {
            trace.record(.out, time: Instant(milliseconds: 1_501), connection: ConnectionID(8), uid: "bob", deviceId: "d-1",
                         frameText: $0)
        }
        trace.controlRoute = "POST /control/faults"
        trace.record(.control, time: Instant(milliseconds: -2), frame: ["rules": []], text: "a \"note\"\n")
        trace.record(.close, time: Instant(milliseconds: 9), connection: ConnectionID(8), text: "", code: 4001)
        let expected = [
            TraceLog.Entry(sequence: 1, time: Instant(milliseconds: 1_500), kind: .in, connection: ConnectionID(7),
                           uid: "élodie", deviceId: "", frame: frame),
            TraceLog.Entry(sequence: 2, time: Instant(milliseconds: 1_501), kind: .out, connection: ConnectionID(8),
                           uid: "bob", deviceId: "d-1", frame: ["id": 4, "op": "ping"]),
            TraceLog.Entry(sequence: 3, time: Instant(milliseconds: -2), kind: .control, route: "POST /control/faults",
                           frame: ["rules": []], text: "a \"note\"\n"),
            TraceLog.Entry(sequence: 4, time: Instant(milliseconds: 9), kind: .close, connection: ConnectionID(8), text: "",
                           code: 4001),
        ]
        #expect(Array(trace.entries) == expected)
        #expect(TraceLog.jsonLines(trace.entries) == TraceLog.jsonLines(expected))
    }

    /// The bound that lets a kept entry skip counting its line is never below the
    /// line's length, whatever its strings hold (fails with a bound of one byte per
    /// string byte: control characters take six).
    @Test func theLineBoundIsNeverBelowTheLine() {
        let strings = ["", "alice", String(repeating: "\u{1}", count: 40), "é\"\\\n\t", String(repeating: "x", count: 300)]
        for first in strings {
            for second in strings {
                let entry = TraceLog.Entry(sequence: .min, time: Instant(milliseconds: -9_223_372_036_854_775_807),
                                           kind: .control, connection: ConnectionID(.max), uid: first, deviceId: second,
                                           route: second, text: first, code: .max)
                for frameCount in [0, 20, 4_000] {
                    #expect(entry.serializedCountBound(frameCount: frameCount) >= entry.serializedCount(frameCount: frameCount))
                }
            }
        }
    }

    /// Every write to /dev/full failed and nothing said so (issue 26).
    @Test func aFailedWriteIsReportedOnceAndTheTraceGoesOn() throws {
        let trace = try TraceLog(capacity: 10, path: "/dev/full")
        trace.writeHeader(["clock": "virtual"])
        trace.record(.control, time: Instant(milliseconds: 0), text: "after")
        #expect(trace.writeFailure == "No space left on device")
        #expect(trace.entries.last?.text == "after", "the entries in memory are still kept")
    }

    @Test func anUnwritableTracePathIsAnErrorWithTheReason() {
        #expect(throws: FixtureError.self) { try TraceLog(path: "/nonexistent-folder/trace.jsonl") }
        do {
            _ = try TraceLog(path: "/")
            Issue.record("a folder was accepted as the trace file")
        } catch {
            #expect(error.description.contains("Is a directory"))
        }
    }
}
