import ChatProtocol
import EventLoop
@testable import MockChatServer
import Testing

@Suite("Trace entry line length")
struct TraceEntryCountTests {
    /// Every combination of the optional fields, with escapes, non-ASCII text and
    /// nested frames among the values.
    static var entries: [TraceLog.Entry] {
        let frame: JSONValue = ["type": "presence.query", "id": 7, "uids": ["al\"ice", "bøb"], "nested": ["x": 1.25, "y": nil]]
        return (0..<(1 << 7)).map { mask in
            func has(_ bit: Int) -> Bool { mask & (1 << bit) != 0 }
            return TraceLog.Entry(
                sequence: mask * 997, time: Instant(milliseconds: 1_700_000_000_123 + Int64(mask)),
                kind: mask.isMultiple(of: 2) ? .out : .control,
                connection: has(0) ? ConnectionID(mask) : nil, uid: has(1) ? "alice\u{1}" : nil,
                deviceId: has(2) ? "phone \u{2603} \\" : nil, route: has(3) ? "POST /control/faults" : nil,
                frame: has(4) ? frame : nil, text: has(5) ? "line\nbreak\t\"quoted\"" : nil, code: has(6) ? 4001 : nil)
        }
    }

    @Test func theCountIsTheSerializedLength() {
        for entry in Self.entries {
            var bytes: [UInt8] = []
            entry.json.serialize(into: &bytes)
            #expect(entry.serializedCount == bytes.count, "\(String(decoding: bytes, as: UTF8.self))")
        }
    }
}
