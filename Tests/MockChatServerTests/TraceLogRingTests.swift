import EventLoop
import MockChatServer
import Testing

@Suite("TraceLog capacity")
struct TraceLogRingTests {
    func record(_ trace: TraceLog, _ count: Int) {
        for index in 0..<count { trace.record(.control, time: Instant(milliseconds: Int64(index)), text: "e\(index)") }
    }

    @Test("keeps the newest entries in order once full")
    func ring() throws {
        let trace = try TraceLog(capacity: 3)
        record(trace, 5)
        #expect(trace.entries.map(\.sequence) == [3, 4, 5])
        #expect(trace.entries(after: 3).map(\.sequence) == [4, 5])
        #expect(trace.entries(after: 0).map(\.sequence) == [3, 4, 5])
        #expect(trace.entries(after: 5).isEmpty)
        record(trace, 2)
        #expect(trace.entries.map(\.text) == ["e4", "e0", "e1"])
    }

    @Test("capacity 0 keeps nothing but still numbers entries")
    func off() throws {
        let trace = try TraceLog(capacity: 0)
        #expect(!trace.isRecording)
        record(trace, 3)
        #expect(trace.entries.isEmpty)
        #expect(trace.entries(after: 0).isEmpty)
    }
}
