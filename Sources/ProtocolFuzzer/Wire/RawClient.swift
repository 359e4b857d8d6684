import EventLoop
import WireKit

/// A TCP client that writes exactly the bytes it is given and keeps what the server
/// answers in a ``ServerStream``. It lives on the server's loop, so after
/// ``EventLoop/settle(timeout:)`` everything the server had to say has arrived.
final class RawClient {
    private(set) var connection: TCPConnection?
    private(set) var stream = ServerStream()
    /// The server ended the stream (or reset it).
    private(set) var ended = false
    /// The connection could not be made.
    private(set) var failure: String?

    init(loop: EventLoop, server: SocketAddress) {
        TCPConnection.connect(on: loop, to: server) { [self] result in
            switch result {
            case .failure(let error):
                failure = "\(error)"
            case .success(let connection):
                self.connection = connection
                connection.onRead = { [unowned self] bytes in stream.feed(bytes) }
                connection.onEnd = { [unowned self, unowned connection] _ in
                    ended = true
                    connection.close()
                }
            }
        }
    }

    var isConnected: Bool { connection != nil && !ended }

    func write(_ bytes: [UInt8]) {
        guard let connection, connection.state == .open, !bytes.isEmpty else { return }
        connection.write(bytes)
    }

    /// Frames that arrived since the last call.
    func takeFrames() -> ArraySlice<ServerFrame> { stream.takeFrames() }

    /// Closes the connection (no close frame: the fuzzer never needs a clean goodbye).
    func close() {
        connection?.close()
    }
}
