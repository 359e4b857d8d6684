/// Splits the bytes a server sends into WebSocket messages.
///
/// Frames are taken straight from the read buffer when they are complete in it; only a
/// frame cut by the end of a read is copied, to be finished by the next one. Fragmented
/// messages are put back together. Server frames are not masked, but a masked one is
/// unmasked rather than refused: the generator measures, it does not police.
public struct ServerFrameDecoder: Sendable {
    /// Why the stream cannot be read as WebSocket frames.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Largest message accepted.
    public let maxMessageBytes: Int
    private var pending: [UInt8] = []
    private var fragments: [UInt8] = []
    private var fragmentOpcode: UInt8?

    public init(maxMessageBytes: Int = 1 << 20) { self.maxMessageBytes = maxMessageBytes }

    /// Offers `bytes`; `deliver` gets each complete message (opcode, payload), the
    /// payload valid only during the call. Control frames (8, 9, 10) are delivered too.
    public mutating func feed(
        _ bytes: UnsafeRawBufferPointer, deliver: (UInt8, UnsafeRawBufferPointer) -> Void
    ) throws(Failure) {
        if pending.isEmpty {
            let used = try parse(bytes, deliver: deliver)
            if used < bytes.count { pending.append(contentsOf: bytes[used...]) }
            return
        }
        pending.append(contentsOf: bytes)
        let buffered = pending
        let outcome = buffered.withUnsafeBytes { all in
            Result { () throws(Failure) -> Int in try parse(all, deliver: deliver) }
        }
        pending.removeFirst(try outcome.get())
    }

    /// Parses whole frames from the start of `bytes`; returns how many bytes they used.
    private mutating func parse(
        _ bytes: UnsafeRawBufferPointer, deliver: (UInt8, UnsafeRawBufferPointer) -> Void
    ) throws(Failure) -> Int {
        var offset = 0
        while let header = try FrameHeader(bytes, at: offset) {
            let end = offset + header.headerLength + header.payloadLength
            guard end <= bytes.count else { break }
            guard header.payloadLength <= maxMessageBytes else {
                throw Failure(description: "frame of \(header.payloadLength) bytes is over the limit")
            }
            let start = offset + header.headerLength
            if let mask = header.mask {
                var copy = Array(bytes[start..<end])
                for index in copy.indices { copy[index] ^= mask[index & 3] }
                let outcome = copy.withUnsafeBytes { payload in
                    Result { () throws(Failure) in try message(header, payload, deliver) }
                }
                try outcome.get()
            } else {
                try message(header, UnsafeRawBufferPointer(rebasing: bytes[start..<end]), deliver)
            }
            offset = end
        }
        return offset
    }

    private mutating func message(
        _ header: FrameHeader, _ payload: UnsafeRawBufferPointer, _ deliver: (UInt8, UnsafeRawBufferPointer) -> Void
    ) throws(Failure) {
        if header.opcode >= 8 {
            deliver(header.opcode, payload)
            return
        }
        if header.opcode == 0 {
            guard let opcode = fragmentOpcode else { throw Failure(description: "continuation frame without a message") }
            fragments.append(contentsOf: payload)
            guard fragments.count <= maxMessageBytes else { throw Failure(description: "message over the limit") }
            if header.fin {
                fragments.withUnsafeBytes { deliver(opcode, $0) }
                fragments.removeAll(keepingCapacity: true)
                fragmentOpcode = nil
            }
            return
        }
        guard fragmentOpcode == nil else { throw Failure(description: "new message inside a fragmented one") }
        if header.fin {
            deliver(header.opcode, payload)
        } else {
            fragmentOpcode = header.opcode
            fragments.append(contentsOf: payload)
        }
    }
}

/// The fixed part of one frame: flags, opcode, length and mask.
struct FrameHeader {
    var fin: Bool
    var opcode: UInt8
    var payloadLength: Int
    var headerLength: Int
    var mask: [UInt8]?

    /// Reads the header at `offset`; nil when it is not complete yet.
    init?(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(ServerFrameDecoder.Failure) {
        let available = bytes.count - offset
        guard available >= 2 else { return nil }
        let first = bytes[offset], second = bytes[offset + 1]
        guard first & 0x70 == 0 else { throw .init(description: "reserved bits set") }
        fin = first & 0x80 != 0
        opcode = first & 0x0F
        var length = Int(second & 0x7F)
        var position = offset + 2
        if length == 126 {
            guard available >= 4 else { return nil }
            length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
            position += 2
        } else if length == 127 {
            guard available >= 10 else { return nil }
            var value: UInt64 = 0
            for index in 0..<8 { value = value << 8 | UInt64(bytes[position + index]) }
            guard value <= UInt64(Int32.max) else { throw .init(description: "frame length \(value) is absurd") }
            length = Int(value)
            position += 8
        }
        if second & 0x80 != 0 {
            guard bytes.count - position >= 4 else { return nil }
            mask = Array(bytes[position..<(position + 4)])
            position += 4
        } else {
            mask = nil
        }
        payloadLength = length
        headerLength = position - offset
    }
}
