import WireKit

/// One HTTP request over a fresh TCP connection on a loop, and its response read with
/// ``HTTPResponseReader`` (its `Content-Length`, or up to the end of the stream). The
/// one transport for the control API: the harness, the load generator and the tests
/// all go through it.
public enum HTTPExchange {
    /// Why no response came back.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The TCP connection could not be made.
        case connect(UVError)
        /// The bytes that came back are not one HTTP response.
        case malformed(String)

        public var description: String {
            switch self {
            case .connect(let error): "cannot connect: \(error)"
            case .malformed(let reason): "malformed response: \(reason)"
            }
        }
    }

    /// Writes `request` and reads the response; `completion` runs once, on the loop.
    public static func send(_ request: [UInt8], on loop: EventLoop, to address: SocketAddress,
                            completion: @escaping (Result<HTTPReply, Failure>) -> Void) {
        TCPConnection.connect(on: loop, to: address) { result in
            switch result {
            case .failure(let error):
                completion(.failure(.connect(error)))
            case .success(let connection):
                var reader = HTTPResponseReader()
                var done = false
                func conclude() {
                    guard !done, reader.isComplete || reader.state == .failed else { return }
                    done = true
                    connection.close()
                    if let reply = reader.reply, reader.isComplete {
                        completion(.success(reply))
                    } else {
                        completion(.failure(.malformed(reader.malformed ?? "no response")))
                    }
                }
                connection.onRead = { bytes in
                    reader.feed(bytes)
                    conclude()
                }
                connection.onEnd = { _ in
                    reader.finish()
                    conclude()
                }
                connection.write(request)
            }
        }
    }

    /// Sends a control API request; see ``send(_:on:to:completion:)``.
    public static func send(_ request: ControlRequest, on loop: EventLoop, to address: SocketAddress,
                            completion: @escaping (Result<HTTPReply, Failure>) -> Void) {
        send(request.bytes, on: loop, to: address, completion: completion)
    }
}
