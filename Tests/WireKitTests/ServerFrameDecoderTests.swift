import WireKit
import Testing

@Suite("Server frame decoder")
struct ServerFrameDecoderTests {
    /// Server frames as a server writes them: unmasked.
    func serverFrame(opcode: UInt8 = 1, fin: Bool = true, _ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(UInt8(payload.count))
        } else {
            frame += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        return frame + payload
    }

    func decode(_ chunks: [[UInt8]]) throws -> [(UInt8, [UInt8])] {
        var decoder = ServerFrameDecoder()
        var messages: [(UInt8, [UInt8])] = []
        for chunk in chunks {
            try chunk.withUnsafeBytes { bytes in
                try decoder.feed(bytes) { opcode, payload in messages.append((opcode, Array(payload))) }
            }
        }
        return messages
    }

    @Test("several frames in one read, and a frame split across reads")
    func splitting() throws {
        let a = serverFrame(Array("hello".utf8)), b = serverFrame(Array(repeating: 120, count: 300))
        let stream = a + b + serverFrame(opcode: 9, [1, 2])
        for cut in [1, 3, a.count, a.count + 2, stream.count - 1] {
            let messages = try decode([Array(stream[..<cut]), Array(stream[cut...])])
            #expect(messages.map(\.0) == [1, 1, 9])
            #expect(messages[0].1 == Array("hello".utf8))
            #expect(messages[1].1.count == 300)
        }
    }

    @Test("fragments are joined into one message")
    func fragments() throws {
        let stream = serverFrame(fin: false, [1, 2]) + serverFrame(opcode: 9, [7]) + serverFrame(opcode: 0, [3])
        let messages = try decode([stream])
        #expect(messages.map(\.0) == [9, 1])
        #expect(messages[1].1 == [1, 2, 3])
    }

    @Test("reserved bits are refused")
    func reserved() {
        #expect(throws: ServerFrameDecoder.Failure.self) { try decode([[0xC1, 0]]) }
    }

    @Test("a masked server frame is unmasked, an absurd length refused")
    func maskedAndAbsurd() throws {
        let masked = ClientFrame(opcode: 1, payload: Array("hi".utf8)).encoded(mask: 0x0102_0304)
        #expect(try decode([masked]).map(\.1) == [Array("hi".utf8)])
        #expect(throws: ServerFrameDecoder.Failure.self) { try decode([[0x81, 127, 0xFF, 0, 0, 0, 0, 0, 0, 1]]) }
        #expect(throws: ServerFrameDecoder.Failure.self) { try decode([[0x80, 0]]) }
    }
}
