/// Reads what the server sends on one connection: an HTTP response head (and body),
/// then, after a 101, WebSocket frames. Server frames are never masked; one that is,
/// or that cannot be parsed, is reported in ``malformed``. The one reader of a raw
/// connection's bytes (EventLoop's `RawConnection`, so the tests and the wire fuzzer).
public struct ServerStream: Sendable {
    private var reader = HTTPResponseReader()
    private var frameReader = ServerFrameReader()

    public init() {}

    /// The HTTP response, once complete.
    public var response: HTTPReply? { reader.isComplete ? reader.reply : nil }

    /// Why the bytes could not be read.
    public var malformed: String? { reader.malformed ?? frameReader.malformed }

    /// Every frame so far.
    public var frames: [ServerFrame] { frameReader.frames }

    /// Appends received bytes and parses what is complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        guard reader.isComplete else {
            reader.feed(bytes)
            if reader.isComplete, reader.reply?.status == 101 { frameReader.feed(reader.takeRemainder()) }
            return
        }
        if reader.reply?.status == 101 { frameReader.feed(bytes) } else { reader.feed(bytes) }
    }

    /// Whether bytes arrived that are not a complete response or frame.
    public var hasUnreadBytes: Bool {
        switch reader.state {
        case .head: !reader.remainder.isEmpty
        case .body, .failed: true
        case .complete: !reader.remainder.isEmpty || frameReader.pendingBytes > 0
        }
    }

    /// Frames that arrived since the last call.
    public mutating func takeFrames() -> ArraySlice<ServerFrame> { frameReader.takeFrames() }
}
