/// One client WebSocket frame, well-formed or not (RFC 6455 §5.2): every header field
/// can be set to any value, and the length in the header can differ from the payload
/// that follows, so the fuzzer and the robustness tests can write broken frames.
/// For a stream of well-formed frames on a hot path, use ``ClientFrameEncoder``.
public struct ClientFrame: Sendable, Equatable {
    /// How the payload length is written.
    public enum LengthForm: Sendable, Equatable {
        /// 7 bits, 16 bits or 64 bits, whichever is the shortest (the only valid form).
        case minimal
        /// Always the 16-bit form (126).
        case sixteen
        /// Always the 64-bit form (127).
        case sixtyFour
    }

    /// Whether this is the last frame of a message.
    public var fin: Bool
    /// RSV1-3 as the low three bits.
    public var rsv: UInt8
    /// 4 bits: 0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong.
    public var opcode: UInt8
    /// Whether the payload is masked (clients must mask).
    public var masked: Bool
    /// The payload before masking.
    public var payload: [UInt8]
    /// The length written in the header; nil writes the payload's.
    public var declaredLength: UInt64?
    /// How the length is written (only ``LengthForm/minimal`` is valid).
    public var lengthForm: LengthForm

    /// A frame; the defaults make a valid final, masked frame.
    public init(fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, masked: Bool = true, payload: [UInt8],
                declaredLength: UInt64? = nil, lengthForm: LengthForm = .minimal) {
        self.fin = fin
        self.rsv = rsv
        self.opcode = opcode
        self.masked = masked
        self.payload = payload
        self.declaredLength = declaredLength
        self.lengthForm = lengthForm
    }

    /// The frame's bytes, masked with `mask` (the key, big-endian) when ``masked``.
    public func encoded(mask: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        FrameHeader.append(fin: fin, rsv: rsv, opcode: opcode, masked: masked, length: declaredLength ?? UInt64(payload.count),
                           form: lengthForm, to: &bytes)
        guard masked else { return bytes + payload }
        let key = [UInt8(truncatingIfNeeded: mask >> 24), UInt8(truncatingIfNeeded: mask >> 16),
                   UInt8(truncatingIfNeeded: mask >> 8), UInt8(truncatingIfNeeded: mask)]
        bytes += key
        let start = bytes.count
        bytes += payload
        Self.applyMask(key, to: &bytes, from: start)
        return bytes
    }

    /// XORs `bytes[start...]` with the 4-byte key, eight bytes at a time (payloads
    /// reach 64 KiB, and the fuzzer runs as a debug build in CI).
    private static func applyMask(_ key: [UInt8], to bytes: inout [UInt8], from start: Int) {
        let count = bytes.count - start
        var wide: UInt64 = 0
        withUnsafeMutableBytes(of: &wide) { for index in 0..<8 { $0[index] = key[index & 3] } }
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress?.advanced(by: start) else { return }
            var offset = 0
            while offset + 8 <= count {
                let word = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                base.storeBytes(of: word ^ wide, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            while offset < count {
                base.storeBytes(of: base.load(fromByteOffset: offset, as: UInt8.self) ^ key[offset & 3],
                                toByteOffset: offset, as: UInt8.self)
                offset += 1
            }
        }
    }

    /// A close frame's payload: the code, big-endian, then the reason.
    public static func closePayload(code: UInt16, reason: [UInt8] = []) -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + reason
    }
}
