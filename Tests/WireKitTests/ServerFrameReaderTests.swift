import Testing
import WireKit

@Suite("Server frame reader")
struct ServerFrameReaderTests {
    /// What a server writes: unmasked frames.
    func serverFrame(fin: Bool = true, opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        ClientFrame(fin: fin, opcode: opcode, masked: false, payload: payload).encoded(mask: 0)
    }

    @Test func framesFedOneByteAtATimeComeOutWhole() {
        let stream = serverFrame(fin: false, opcode: 1, [1, 2]) + serverFrame(opcode: 0, Array(repeating: 7, count: 300))
            + serverFrame(opcode: 8, ClientFrame.closePayload(code: 4001, reason: Array("bye".utf8)))
        var reader = ServerFrameReader()
        for byte in stream { reader.feed([byte]) }
        #expect(reader.frames.map(\.opcode) == [1, 0, 8])
        #expect(reader.frames.map(\.fin) == [false, true, true])
        #expect(reader.frames[1].payload.count == 300)
        #expect(reader.frames[2].closeCode == 4001)
        #expect(reader.frames[2].closeReason == "bye")
        #expect(reader.pendingBytes == 0)
        #expect(reader.malformed == nil)
    }

    @Test func takeFramesHandsOutEachFrameOnce() {
        var reader = ServerFrameReader()
        reader.feed(serverFrame(opcode: 1, [1]) + serverFrame(opcode: 9, []))
        #expect(reader.takeFrames().count == 2)
        #expect(reader.takeFrames().isEmpty)
        reader.feed(serverFrame(opcode: 8, []))
        #expect(reader.takeFrames().map(\.closeCode) == [1005])
    }

    @Test func maskedOrHugeFramesAreMalformed() {
        var masked = ServerFrameReader()
        masked.feed(ClientFrame(opcode: 1, payload: [1]).encoded(mask: 1))
        #expect(masked.malformed == "the server sent a masked frame")
        #expect(masked.frames.isEmpty)
        var huge = ServerFrameReader(maxFrameBytes: 10)
        huge.feed(serverFrame(opcode: 2, Array(repeating: 0, count: 11)))
        #expect(huge.malformed == "the server announced a frame of 11 bytes")
    }
}
