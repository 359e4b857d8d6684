/// One frame as a server sent it: not joined with the other fragments of its message.
public struct ServerFrame: Sendable, Equatable {
    /// Whether this is the last frame of a message.
    public var fin: Bool
    /// 4 bits: 0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong.
    public var opcode: UInt8
    /// The payload as sent (servers never mask).
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: UInt8, payload: [UInt8]) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// The payload as UTF-8 text.
    public var text: String { String(decoding: payload, as: UTF8.self) }

    /// The code of a close frame (1005 when it carries none); nil for other frames.
    public var closeCode: UInt16? {
        guard opcode == 8 else { return nil }
        return payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : 1005
    }

    /// The reason text of a close frame.
    public var closeReason: String? {
        opcode == 8 ? String(decoding: payload.dropFirst(2), as: UTF8.self) : nil
    }
}
