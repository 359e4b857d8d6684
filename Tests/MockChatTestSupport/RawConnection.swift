import EventLoop
import WireKit

/// A plain TCP connection that collects what arrives.
public final class RawConnection {
    public let connection: TCPConnection
    public private(set) var received: [UInt8] = []
    /// The stream ended: nil error for an orderly end, else the failure (e.g. ECONNRESET).
    public private(set) var ended = false
    public private(set) var endError: UVError?
    public private(set) var isClosed = false

    public init(_ connection: TCPConnection) {
        self.connection = connection
        connection.onRead = { [weak self] bytes in self?.received.append(contentsOf: bytes) }
        connection.onEnd = { [weak self, unowned connection] error in
            self?.ended = true
            self?.endError = error
            connection.close()
        }
        connection.onClosed = { [weak self] in self?.isClosed = true }
    }

    public func write(_ bytes: [UInt8]) { connection.write(bytes) }

    /// The server's HTTP response, once complete.
    public var reply: HTTPReply? { HTTPReply(received) }

    /// Complete server frames after the HTTP response; a trailing partial frame is left out.
    public var frames: [ServerFrame] {
        var response = HTTPResponseReader()
        response.feed(received)
        guard response.isComplete else { return [] }
        var reader = ServerFrameReader()
        reader.feed(response.takeRemainder())
        return reader.frames
    }
}
