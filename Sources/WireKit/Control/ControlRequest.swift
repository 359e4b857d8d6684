/// One request to the server's control API as bytes: JSON in, one
/// response, then the server closes (`Connection: close`). Read the answer with
/// ``HTTPResponseReader``; EventLoop's `HTTPExchange` does both over a connection.
public struct ControlRequest: Sendable, Equatable {
    /// `GET` or `POST`.
    public var method: String
    /// The target, e.g. `/control/settle` or `/control/trace?since=3`.
    public var path: String
    /// The value of the `Host` header.
    public var host: String
    /// The JSON body; empty sends `Content-Length: 0`.
    public var body: [UInt8]

    public init(method: String, path: String, host: String, body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.host = host
        self.body = body
    }

    /// The request's bytes.
    public var bytes: [UInt8] {
        let head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }
}
