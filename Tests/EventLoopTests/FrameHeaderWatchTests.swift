@testable import EventLoop
import Testing

/// Where ``FrameHeaderWatch`` finds the peer's close frame, which a silent connection
/// holds back from wslay (docs/PROTOCOL.md, 12.7, "Silence").
@Suite("Frame header watch")
struct FrameHeaderWatchTests {
    /// A masked client frame: FIN, the opcode, a 7-bit length, a zero mask, the payload.
    static func frame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0x80 | opcode, 0x80 | UInt8(payload.count), 0, 0, 0, 0] + payload
    }

    static func scan(_ watch: inout FrameHeaderWatch, _ bytes: [UInt8]) -> Int? {
        _ = bytes.withUnsafeBytes { watch.scan($0, limit: 1 << 16) }
        return watch.closeFrameStart
    }

    @Test func findsTheCloseAfterTheFramesBeforeIt() {
        var watch = FrameHeaderWatch()
        let text = Self.frame(opcode: 1, Array(#"{"op":"ping","id":2}"#.utf8))
        let close = Self.frame(opcode: 8, [0x03, 0xE8])
        #expect(Self.scan(&watch, text + close + text) == text.count)
        #expect(Self.scan(&watch, text) == nil, "each read is scanned on its own")
    }

    @Test func aCloseHeaderSplitOverTwoReadsIsHeldFromTheSecond() {
        var watch = FrameHeaderWatch()
        let text = Self.frame(opcode: 1, Array("hi".utf8))
        let close = Self.frame(opcode: 8, [0x03, 0xE8])
        // Half a header is not yet a close: wslay may have it, it cannot act on it.
        #expect(Self.scan(&watch, text + close.prefix(3)) == nil)
        #expect(Self.scan(&watch, Array(close.dropFirst(3))) == 0, "it began in the earlier read")
    }

    @Test func aCloseInsideAPayloadIsNotOne() {
        var watch = FrameHeaderWatch()
        // A binary payload whose bytes look like a close frame.
        let binary = Self.frame(opcode: 2, Self.frame(opcode: 8, []))
        #expect(Self.scan(&watch, binary) == nil)
    }
}
