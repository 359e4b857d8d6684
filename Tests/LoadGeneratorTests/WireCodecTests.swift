import LoadGenerator
import Testing

@Suite("Generator wire codec")
struct WireCodecTests {
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

    @Test("client frames are masked and unmask to the payload")
    func masking() {
        var encoder = ClientFrameEncoder(seed: 7)
        var frame: [UInt8] = []
        encoder.appendText(Array("{\"id\":2,\"op\":\"ping\"}".utf8), to: &frame)
        #expect(frame[0] == 0x81)
        #expect(frame[1] == 0x80 | 20)
        let key = Array(frame[2..<6])
        let payload = frame[6...].enumerated().map { $0.element ^ key[$0.offset & 3] }
        #expect(String(decoding: payload, as: UTF8.self) == "{\"id\":2,\"op\":\"ping\"}")
    }

    @Test("replies and presence events are recognised by their first bytes")
    func kinds() {
        func kind(_ text: String) -> ServerFrameKind {
            Array(text.utf8).withUnsafeBytes { ServerFrameKind($0) }
        }
        #expect(kind(#"{"id":42,"result":{"pong":true,"serverTime":1.0}}"#) == .reply(id: 42, ok: true))
        #expect(kind(#"{"id":3,"error":{"errorCode":"ERR_NOT_LOGGED_IN"}}"#) == .reply(id: 3, ok: false))
        #expect(kind(#"{"event":"user.online","user":{"uid":"bench-u7","status":"online"}}"#)
                == .presence(online: true, uid: "bench-u7"))
        #expect(kind(#"{"event":"user.offline","user":{"uid":"bench-u7"}}"#) == .presence(online: false, uid: "bench-u7"))
        // Other key orders and spacing go through the parser.
        #expect(kind(#"{"result": {}, "id": 5}"#) == .reply(id: 5, ok: true))
        #expect(kind(#"{"user":{"uid":"x"},"event":"user.online"}"#) == .presence(online: true, uid: "x"))
        #expect(kind(#"{"event":"device.kicked","reason":"r"}"#) == .event("device.kicked"))
        #expect(kind(#"{"id":"s","result":{}}"#) == .reply(id: nil, ok: true))
        #expect(kind("not json") == .unknown)
    }
}
