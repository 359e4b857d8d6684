import MockChatCore
import Testing
import WireKit

@Suite("Client frames")
struct ClientFrameTests {
    @Test func framesAreEncodedAsRFC6455Says() {
        let frame = ClientFrame(opcode: 1, payload: Array("Hello".utf8)).encoded(mask: 0x37FA_213D)
        // RFC 6455 §5.7: a masked "Hello".
        #expect(frame == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        let long = ClientFrame(opcode: 2, masked: false, payload: [UInt8](repeating: 0, count: 256)).encoded(mask: 0)
        #expect(Array(long.prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
        let declared = ClientFrame(opcode: 1, payload: [], declaredLength: 65_537).encoded(mask: 0)
        #expect(Array(declared.prefix(10)) == [0x81, 0xFF, 0, 0, 0, 0, 0, 1, 0, 1])
    }

    @Test func brokenFramesKeepEveryFieldAsWritten() throws {
        let frame = ClientFrame(fin: false, rsv: 5, opcode: 0xB, masked: false, payload: [9], lengthForm: .sixtyFour)
            .encoded(mask: 0)
        let header = try #require(frame.withUnsafeBytes { FrameHeader($0, at: 0) })
        #expect(!header.fin && header.rsv == 5 && header.opcode == 0xB)
        #expect(header.payloadLength == 1 && header.headerLength == 10 && header.mask == nil)
        #expect(frame.last == 9)
        let sixteen = ClientFrame(opcode: 9, payload: [1, 2], lengthForm: .sixteen).encoded(mask: 0xA0B0_C0D0)
        #expect(Array(sixteen.prefix(4)) == [0x89, 0x80 | 126, 0, 2])
        #expect(Array(sixteen[4..<8]) == [0xA0, 0xB0, 0xC0, 0xD0])
    }

    @Test func theEncoderWritesTheSameBytesAsAFrameWithItsMask() {
        var encoder = ClientFrameEncoder(seed: 7)
        var masks = SplitMix64(seed: 7)
        for size in [0, 5, 125, 126, 300, 65_535, 65_536] {
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            var written: [UInt8] = []
            encoder.appendText(payload, to: &written)
            let expected = ClientFrame(opcode: 1, payload: payload).encoded(mask: UInt32(truncatingIfNeeded: masks.next()))
            #expect(written == expected, "payload of \(size) bytes")
        }
    }

    @Test func aCloseFrameCarriesItsCodeThenItsReason() {
        #expect(ClientFrame.closePayload(code: 1000) == [0x03, 0xE8])
        #expect(ClientFrame.closePayload(code: 4001, reason: Array("kick".utf8)) == [0x0F, 0xA1] + Array("kick".utf8))
    }
}
