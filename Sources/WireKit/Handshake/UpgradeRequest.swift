import Foundation
import MockChatCore

/// The client side of the WebSocket opening handshake (RFC 6455 §4.1): the request,
/// and the check of the server's answer.
///
/// Every client in MockChat builds its upgrade here. The fuzzer starts from
/// ``lines`` and breaks them one rule at a time.
public struct UpgradeRequest: Sendable, Equatable {
    /// The value of the `Host` header.
    public var host: String
    /// The request target, e.g. `/v1/ws`.
    public var path: String
    /// `Sec-WebSocket-Key`: 16 bytes in base64.
    public var key: String

    public init(host: String, path: String = "/v1/ws", key: String) {
        self.host = host
        self.path = path
        self.key = key
    }

    /// A request whose key is 16 bytes of `random`.
    public init(host: String, path: String = "/v1/ws", random: inout SplitMix64) {
        self.init(host: host, path: path, key: Self.key((0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
    }

    /// The key for 16 bytes: their base64.
    public static func key(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// The request line, then the header lines, without line ends.
    public var lines: [String] {
        ["GET \(path) HTTP/1.1", "Host: \(host)", "Upgrade: websocket", "Connection: Upgrade",
         "Sec-WebSocket-Key: \(key)", "Sec-WebSocket-Version: 13"]
    }

    /// The request's bytes.
    public var bytes: [UInt8] { Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) }

    /// The `Sec-WebSocket-Accept` value a server must answer with.
    public var expectedAccept: String { WebSocketAccept.value(forKey: key) }

    /// Why an answer does not complete the handshake; nil when it does.
    public func check(_ reply: HTTPReply) -> UpgradeFailure? {
        guard reply.status == 101 else { return .rejected(status: reply.status, body: reply.text) }
        guard reply.headerValues("Sec-WebSocket-Accept") == [expectedAccept] else {
            return .invalidResponse("wrong Sec-WebSocket-Accept")
        }
        return nil
    }
}

/// Why a server's answer to an upgrade request does not open a WebSocket.
public enum UpgradeFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with something other than 101.
    case rejected(status: Int, body: String)
    /// The answer was not a valid handshake response.
    case invalidResponse(String)

    public var description: String {
        switch self {
        case .rejected(let status, let body): "upgrade refused: \(status) \(body.prefix(80))"
        case .invalidResponse(let reason): "invalid upgrade response: \(reason)"
        }
    }
}
