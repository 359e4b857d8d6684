import Foundation

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

    /// Connects to `ws://address/path`. `seed` drives the handshake key and frame masks.
    public static func connect(
        on loop: EventLoop, to address: SocketAddress, path: String = "/v1/ws", seed: UInt64,
        configuration: WebSocket.Configuration = .init(),
        completion: @escaping (Result<WebSocket, Failure>) -> Void
    ) {
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
                handshake(connection, host: address.description, path: path, seed: seed,
                          configuration: configuration, completion: completion)
            }
        }
    }

    private static func handshake(
        _ connection: TCPConnection, host: String, path: String, seed: UInt64,
        configuration: WebSocket.Configuration, completion: @escaping (Result<WebSocket, Failure>) -> Void
    ) {
        var random = SplitMix64(seed: seed)
        let keyBytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let key = Data(keyBytes).base64EncodedString()
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        connection.write(Array(request.utf8))
        var received: [UInt8] = []
        var finished = false
        func fail(_ failure: Failure) {
            guard !finished else { return }
            finished = true
            connection.close()
            completion(.failure(failure))
        }
        connection.onEnd = { _ in fail(.closed) }
        connection.onRead = { bytes in
            received.append(contentsOf: bytes)
            guard let end = HTTPResponse.headEnd(received) else {
                if received.count > 16 * 1024 { fail(.invalidResponse("response head too large")) }
                return
            }
            let head = String(decoding: received[..<end], as: UTF8.self)
            let lines = head.components(separatedBy: "\r\n")
            let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            guard status == 101 else {
                fail(.rejected(status: status, body: String(decoding: received[(end + 4)...], as: UTF8.self)))
                return
            }
            let accept = lines.dropFirst().first { $0.lowercased().hasPrefix("sec-websocket-accept:") }
                .map { $0.dropFirst("sec-websocket-accept:".count).trimmingCharacters(in: .whitespaces) }
            guard accept == WebSocketHandshake.acceptValue(forKey: key) else {
                fail(.invalidResponse("wrong Sec-WebSocket-Accept"))
                return
            }
            finished = true
            let socket = WebSocket(connection: connection, role: .client(maskSeed: random.next()),
                                   configuration: configuration, initialBytes: Array(received[(end + 4)...]))
            completion(.success(socket))
        }
    }
}
