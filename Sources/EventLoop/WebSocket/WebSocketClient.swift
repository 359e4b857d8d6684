import WireKit

/// Opens client WebSocket connections: TCP connect, the HTTP upgrade request, and
/// a check of the server's `101` answer and `Sec-WebSocket-Accept` value.
public enum WebSocketClient {
    /// Why a connection attempt failed.
    public enum Failure: Error, Sendable, Equatable {
        /// The TCP connection could not be made (refused, unreachable...).
        case connect(UVError)
        /// The server answered the upgrade with something other than 101.
        case rejected(status: Int, body: String)
        /// The answer was not a valid handshake response.
        case invalidResponse(String)
        /// The stream ended before the handshake completed.
        case closed
    }

    /// An attempt under way, which its owner may give up (``cancel()``).
    public final class Attempt {
        fileprivate var cancelled = false
        fileprivate var connection: TCPConnection?

        /// Resets the TCP connection of an attempt not yet answered (it ends with
        /// ``Failure/closed``); nothing once it has opened or failed.
        public func cancel() {
            cancelled = true
            connection?.reset()
        }
    }

    /// Connects to `ws://address/path`. `seed` drives the handshake key and frame masks.
    @discardableResult
    public static func connect(
        on loop: EventLoop, to address: SocketAddress, path: String = "/v1/ws", seed: UInt64,
        configuration: WebSocket.Configuration = .init(),
        completion: @escaping (Result<WebSocket, Failure>) -> Void
    ) -> Attempt {
        let attempt = Attempt()
        loop.clientSockets.opening += 1
        let completion: (Result<WebSocket, Failure>) -> Void = { result in
            loop.clientSockets.opening -= 1
            completion(result)
        }
        TCPConnection.connect(on: loop, to: address) { result in
            switch result {
            case .failure(let error):
                completion(.failure(.connect(error)))
            case .success(let connection):
                loop.clientSockets.handshakeStarted(connection)
                attempt.connection = connection
                handshake(connection, host: address.description, path: path, seed: seed,
                          configuration: configuration) { result in
                    attempt.connection = nil
                    loop.clientSockets.handshakeEnded(connection)
                    completion(result)
                }
                if attempt.cancelled { attempt.cancel() }
            }
        }
        return attempt
    }

    private static func handshake(
        _ connection: TCPConnection, host: String, path: String, seed: UInt64,
        configuration: WebSocket.Configuration, completion: @escaping (Result<WebSocket, Failure>) -> Void
    ) {
        var random = SplitMix64(seed: seed)
        let request = UpgradeRequest(host: host, path: path, random: &random)
        connection.write(request.bytes)
        var reader = HTTPResponseReader()
        var finished = false
        func fail(_ failure: Failure) {
            guard !finished else { return }
            finished = true
            connection.close()
            completion(.failure(failure))
        }
        /// Opens the socket, or fails, once the answer is complete; false while it is not.
        func conclude() -> Bool {
            guard !finished else { return true }
            if let malformed = reader.malformed {
                fail(.invalidResponse(malformed))
                return true
            }
            guard reader.isComplete, let reply = reader.reply else { return false }
            switch request.check(reply) {
            case .rejected(let status, let body)?: fail(.rejected(status: status, body: body))
            case .invalidResponse(let reason)?: fail(.invalidResponse(reason))
            case nil: open()
            }
            return true
        }
        func open() {
            finished = true
            let socket = WebSocket(connection: connection, role: .client(maskSeed: random.next()),
                                   configuration: configuration, initialBytes: reader.takeRemainder())
            completion(.success(socket))
        }
        connection.onEnd = { _ in
            // Only a rejection whose body runs to the end of the stream is complete now.
            if reader.state == .body(length: nil) {
                reader.finish()
                if conclude() { return }
            }
            fail(.closed)
        }
        connection.onRead = { bytes in
            reader.feed(bytes)
            _ = conclude()
        }
        // Reset by its owner (``Attempt/cancel()``) before an answer came: the attempt is
        // over and no longer counts among the loop's opening sockets.
        connection.onClosed = { fail(.closed) }
    }
}
