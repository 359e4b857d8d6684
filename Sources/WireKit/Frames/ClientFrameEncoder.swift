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
        let count = payload.count
        FrameHeader.append(opcode: opcode, masked: true, length: UInt64(count), to: &buffer)
        let mask = UInt32(truncatingIfNeeded: masks.next())
        withUnsafeBytes(of: mask.bigEndian) { key in
            buffer.append(contentsOf: key)
            for index in 0..<count {
                buffer.append(payload[index] ^ key[index & 3])
            }
        }
    }

    /// Appends one masked text frame.
    @inlinable
    public mutating func appendText(_ text: [UInt8], to buffer: inout [UInt8]) {
        text.withUnsafeBytes { append(opcode: 1, payload: $0, to: &buffer) }
    }
}
