import WireKit

/// A plain TCP connection that writes exactly the bytes it is given and keeps what the
/// server answers: every byte, the size of each read, and the same bytes read as a
/// ``ServerStream`` (the HTTP response, then the frames after a 101). The one raw client
/// of the package: the robustness tests and the wire fuzzer both use it. It lives on the
/// server's loop in both, so after ``EventLoop/settle(timeout:)`` everything the server
/// had to say has arrived.
public final class RawConnection {
    public let connection: TCPConnection
    /// Every byte received, in order.
    public private(set) var received: [UInt8] = []
    /// The size of each read, in order.
    public private(set) var readSizes: [Int] = []
    /// The received bytes read as a response and frames.
    public private(set) var stream = ServerStream()
    /// The stream ended: ``endError`` is nil for an orderly end, else the failure (e.g. ECONNRESET).
    public private(set) var ended = false
    public private(set) var endError: UVError?
    public private(set) var isClosed = false

    public init(_ connection: TCPConnection) {
        self.connection = connection
        connection.onRead = { [weak self] bytes in
            self?.received.append(contentsOf: bytes)
            self?.readSizes.append(bytes.count)
            self?.stream.feed(bytes)
        }
        connection.onEnd = { [weak self, unowned connection] error in
            self?.ended = true
            self?.endError = error
            connection.close()
        }
        connection.onClosed = { [weak self] in self?.isClosed = true }
    }

    /// Connects to `address` on `loop`; `completion` runs on the loop with the connection
    /// or the reason it could not be made.
    public static func connect(on loop: EventLoop, to address: SocketAddress,
                               completion: @escaping (Result<RawConnection, UVError>) -> Void) {
        TCPConnection.connect(on: loop, to: address) { result in completion(result.map(RawConnection.init)) }
    }

    /// Writes `bytes` as they are, while the connection is open.
    public func write(_ bytes: [UInt8]) {
        guard connection.state == .open, !bytes.isEmpty else { return }
        connection.write(bytes)
    }

    /// Complete server frames after a 101 response; a trailing partial frame is left out.
    public var frames: [ServerFrame] { stream.frames }

    /// Frames that arrived since the last call.
    public func takeFrames() -> ArraySlice<ServerFrame> { stream.takeFrames() }

    /// Closes the connection without a close frame.
    public func close() { connection.close() }
}
