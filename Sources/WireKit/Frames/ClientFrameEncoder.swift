import MockChatCore

/// Builds the masked frames a WebSocket client sends (RFC 6455, section 5.2).
///
/// The generator frames its own messages instead of going through wslay: it appends
/// many small frames to one buffer and writes them with a single call, and it pays
/// for no copies it does not need. Masks come from a seeded generator, so a run's
/// bytes are reproducible.
public struct ClientFrameEncoder: Sendable {
    @usableFromInline var masks: SplitMix64

    public init(seed: UInt64) { masks = SplitMix64(seed: seed) }

    /// Appends one masked frame with `opcode` (1 text, 8 close, 9 ping, 10 pong).
    @inlinable
    public mutating func append(opcode: UInt8, payload: UnsafeRawBufferPointer, to buffer: inout [UInt8]) {
        buffer.append(0x80 | opcode)
        let count = payload.count
        if count < 126 {
            buffer.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            buffer.append(0x80 | 126)
            buffer.append(UInt8(count >> 8))
            buffer.append(UInt8(count & 0xFF))
        } else {
            buffer.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        let mask = UInt32(truncatingIfNeeded: masks.next())
        let key = [UInt8(mask >> 24), UInt8((mask >> 16) & 0xFF), UInt8((mask >> 8) & 0xFF), UInt8(mask & 0xFF)]
        buffer.append(contentsOf: key)
        for index in 0..<count {
            buffer.append(payload[index] ^ key[index & 3])
        }
    }

    /// Appends one masked text frame.
    @inlinable
    public mutating func appendText(_ text: [UInt8], to buffer: inout [UInt8]) {
        text.withUnsafeBytes { append(opcode: 1, payload: $0, to: &buffer) }
    }
}
