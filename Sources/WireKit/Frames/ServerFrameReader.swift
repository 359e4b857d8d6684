/// Splits what a server sends into frames, one by one, as they are on the wire: for
/// checks of the frames themselves (the fuzzer, the robustness tests). Bytes may be
/// fed in any pieces. Servers never mask, so a masked frame, or one announcing more
/// than ``maxFrameBytes``, stops the reader and is reported in ``malformed``.
///
/// The load generator, which wants whole messages without copies, uses
/// ``ServerFrameDecoder``.
public struct ServerFrameReader: Sendable {
    /// Largest frame accepted.
    public let maxFrameBytes: Int
    /// Frames read so far.
    public private(set) var frames: [ServerFrame] = []
    /// Why the stream stopped being readable, if it did.
    public private(set) var malformed: String?
    private var buffer: [UInt8] = []
    /// Frames already handed out by ``takeFrames()``.
    private var taken = 0

    public init(maxFrameBytes: Int = 1 << 24) { self.maxFrameBytes = maxFrameBytes }

    /// Bytes received and not yet part of a complete frame.
    public var pendingBytes: Int { buffer.count }

    /// Appends received bytes and reads the frames they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
        guard malformed == nil else { return }
        var used = 0
        buffer.withUnsafeBytes { all in
            while let header = FrameHeader(all, at: used) {
                guard header.mask == nil else {
                    malformed = "the server sent a masked frame"
                    return
                }
                guard header.payloadLength <= UInt64(maxFrameBytes) else {
                    malformed = "the server announced a frame of \(header.payloadLength) bytes"
                    return
                }
                let start = used + header.headerLength, end = start + Int(header.payloadLength)
                guard end <= all.count else { return }
                frames.append(ServerFrame(fin: header.fin, opcode: header.opcode, payload: Array(all[start..<end])))
                used = end
            }
        }
        buffer.removeFirst(used)
    }

    /// Frames that arrived since the last call.
    public mutating func takeFrames() -> ArraySlice<ServerFrame> {
        defer { taken = frames.count }
        return frames[taken...]
    }
}
