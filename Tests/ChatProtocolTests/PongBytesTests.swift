import ChatProtocol
import Testing

@Suite("ServerMessage.writePong")
struct PongBytesTests {
    @Test("writes the bytes of the pong message's JSON")
    func sameBytes() {
        let ids: [Int64] = [0, 7, 42, 123456789012345678, Int64.max]
        let times: [Double] = [0, 0.25, 1e-05, 1699900000.0, 1764032400.123, 12345.678901234, 3.5e20,
                               .infinity, -.infinity, .nan]
        for id in ids {
            for time in times {
                var buffer: [UInt8] = [1, 2]
                buffer.removeAll(keepingCapacity: true)
                ServerMessage.writePong(id: id, serverTime: time, into: &buffer)
                #expect(buffer == ServerMessage.pong(id: .integer(id), serverTime: time).bytes, "\(id) \(time)")
            }
        }
    }
}
