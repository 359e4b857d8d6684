import WireKit

extension ClientFrame {
    /// The mask of the frames tests write by hand.
    public static let testMask: UInt32 = 0x37FA_213D

    /// One frame's bytes, masked with ``testMask``. `declaredLength` puts a different
    /// length in the header than the payload that follows.
    public static func make(opcode: UInt8, payload: [UInt8] = [], fin: Bool = true, rsv: UInt8 = 0,
                            masked: Bool = true, declaredLength: UInt64? = nil) -> [UInt8] {
        ClientFrame(fin: fin, rsv: rsv, opcode: opcode, masked: masked, payload: payload, declaredLength: declaredLength)
            .encoded(mask: testMask)
    }

    /// A masked text frame.
    public static func text(_ text: String, fin: Bool = true) -> [UInt8] {
        make(opcode: 1, payload: Array(text.utf8), fin: fin)
    }

    /// A close frame with `code` (none when nil) and `reason` bytes.
    public static func close(_ code: UInt16?, reason: [UInt8] = []) -> [UInt8] {
        make(opcode: 8, payload: code.map { closePayload(code: $0, reason: reason) } ?? reason)
    }
}
