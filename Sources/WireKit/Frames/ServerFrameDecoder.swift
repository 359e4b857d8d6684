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
        public init(description: String) { self.description = description }
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
        while let header = FrameHeader(bytes, at: offset) {
            guard header.rsv == 0 else { throw Failure(description: "reserved bits set") }
            guard header.payloadLength <= UInt64(Int32.max) else {
                throw Failure(description: "frame length \(header.payloadLength) is absurd")
            }
            let end = offset + header.headerLength + Int(header.payloadLength)
            guard end <= bytes.count else { break }
            guard Int(header.payloadLength) <= maxMessageBytes else {
                throw Failure(description: "frame of \(header.payloadLength) bytes is over the limit")
            }
            let start = offset + header.headerLength
            if header.mask != nil {
                var copy = Array(bytes[start..<end])
                for index in copy.indices { copy[index] ^= header.maskByte(index) }
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
