/// The fixed part of one WebSocket frame (RFC 6455 §5.2): flags, opcode, length and
/// mask, read as written, without judging them. Each reader applies its own rules
/// (reserved bits, masking, length limits).
public struct FrameHeader: Sendable, Equatable {
    /// Whether this is the last frame of a message.
    public var fin: Bool
    /// RSV1-3 as the low three bits.
    public var rsv: UInt8
    /// 4 bits: 0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong.
    public var opcode: UInt8
    /// The payload length the header declares.
    public var payloadLength: UInt64
    /// Bytes the header takes, mask included.
    public var headerLength: Int
    /// The masking key, big-endian; nil for an unmasked frame.
    public var mask: UInt32?

    /// Reads the header at `offset`; nil when it is not complete yet.
    public init?(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        let available = bytes.count - offset
        guard available >= 2 else { return nil }
        let first = bytes[offset], second = bytes[offset + 1]
        fin = first & 0x80 != 0
        rsv = (first >> 4) & 0x7
        opcode = first & 0x0F
        var length = UInt64(second & 0x7F)
        var position = offset + 2
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(bytes[position]) << 8 | UInt64(bytes[position + 1])
            position += 2
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for index in 0..<8 { length = length << 8 | UInt64(bytes[position + index]) }
            position += 8
        }
        if second & 0x80 != 0 {
            guard bytes.count - position >= 4 else { return nil }
            var key: UInt32 = 0
            for index in 0..<4 { key = key << 8 | UInt32(bytes[position + index]) }
            mask = key
            position += 4
        } else {
            mask = nil
        }
        payloadLength = length
        headerLength = position - offset
    }

    /// The mask's byte for payload offset `index`.
    @inlinable
    public func maskByte(_ index: Int) -> UInt8 {
        guard let mask else { return 0 }
        return UInt8(truncatingIfNeeded: mask >> UInt32(24 - 8 * (index & 3)))
    }

    /// Appends a header for a payload of `length` bytes, the length written in `form`
    /// (RFC 6455 §5.2); a masked header still needs its 4-byte key after it.
    @inlinable
    public static func append(fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, masked: Bool, length: UInt64,
                              form: ClientFrame.LengthForm = .minimal, to bytes: inout [UInt8]) {
        bytes.append((fin ? 0x80 : 0) | ((rsv & 0x7) << 4) | (opcode & 0xF))
        let maskBit: UInt8 = masked ? 0x80 : 0
        let form: ClientFrame.LengthForm = form == .minimal
            ? (length < 126 ? .minimal : length < 65_536 ? .sixteen : .sixtyFour) : form
        switch form {
        case .minimal:
            bytes.append(maskBit | UInt8(truncatingIfNeeded: length))
        case .sixteen:
            bytes.append(maskBit | 126)
            bytes.append(UInt8(truncatingIfNeeded: length >> 8))
            bytes.append(UInt8(truncatingIfNeeded: length))
        case .sixtyFour:
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        }
    }
}
