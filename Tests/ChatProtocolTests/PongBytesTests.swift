import ChatProtocol
import Testing

@Suite("ServerMessage.writePong")
struct PongBytesTests {
    @Test("writes the bytes of the pong message's JSON")
    func sameBytes() {
        let ids: [Int64] = [0, 7, 42, 10, 99, 100, 123456789012345678, Int64.max, -1, -10, Int64.min]
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

    @Test("writes integers as their description does")
    func integers() {
        var values: [Int64] = [0, 1, 9, 10, 11, 99, 100, 101, 999_999, 1_000_000, Int64.max, Int64.min, -1, -9, -10]
        // A fixed spread over the whole range (multiples of the golden-ratio constant).
        values += (0..<1000).map { Int64(truncatingIfNeeded: UInt64($0) &* 0x9E37_79B9_7F4A_7C15) }
        for value in values {
            var buffer: [UInt8] = [0x20]
            JSONValue.writeInteger(value, into: &buffer)
            #expect(buffer == [0x20] + Array(value.description.utf8), "\(value)")
        }
    }
}
