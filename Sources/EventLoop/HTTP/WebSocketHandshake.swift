import Foundation
import WireKit

/// The server side of the WebSocket opening handshake (RFC 6455 section 4.2).
///
/// Only the handshake headers are checked; routing on the request path is
/// left to the caller. No subprotocol or extension is negotiated.
public enum WebSocketHandshake {
    /// What to do with a request.
    public enum Decision: Sendable, Equatable {
        /// No `websocket` token in `Upgrade`: an ordinary HTTP request.
        case notUpgrade
        /// A valid upgrade: send this 101 response, then speak WebSocket.
        case accept(HTTPResponse)
        /// An invalid upgrade: send this response (400, or 426 naming the
        /// supported version) and close the connection.
        case reject(HTTPResponse)
    }

    /// Classifies `request` and, for upgrade requests, validates it
    /// (RFC 6455 section 4.2.1) and builds the reply (section 4.2.2).
    public static func evaluate(_ request: HTTPRequest, limits: HTTPLimits = HTTPLimits()) -> Decision {
        let upgrade: Bool
        switch listContains(request.headerValues("Upgrade"), token: "websocket", limit: limits.maxListElements) {
        case nil: return .reject(.rejection(status: 400, "too many elements in Upgrade\n"))
        case let found?: upgrade = found
        }
        guard upgrade else { return .notUpgrade }

        guard request.method == "GET" else {
            return .reject(.rejection(status: 400, "a WebSocket upgrade must use GET\n"))
        }
        guard request.version == "HTTP/1.1" else {
            return .reject(.rejection(status: 400, "a WebSocket upgrade requires HTTP/1.1\n"))
        }
        guard request.headerValues("Host").count == 1 else {
            return .reject(.rejection(status: 400, "exactly one Host header is required\n"))
        }
        switch listContains(request.headerValues("Connection"), token: "upgrade", limit: limits.maxListElements) {
        case nil: return .reject(.rejection(status: 400, "too many elements in Connection\n"))
        case false?: return .reject(.rejection(status: 400, "Connection must include upgrade\n"))
        case true?: break
        }
        let keys = request.headerValues("Sec-WebSocket-Key")
        guard keys.count == 1 else {
            return .reject(.rejection(status: 400, "exactly one Sec-WebSocket-Key is required\n"))
        }
        let key = keys[0]
        guard key.utf8.count == 24, let decoded = Data(base64Encoded: key), decoded.count == 16 else {
            return .reject(.rejection(status: 400, "Sec-WebSocket-Key must be 16 bytes in base64\n"))
        }
        // Section 4.4: an unsupported or missing version gets 426 listing ours.
        guard request.headerValues("Sec-WebSocket-Version") == ["13"] else {
            var response = HTTPResponse.rejection(status: 426, "only WebSocket version 13 is supported\n")
            response.headers.append((name: "Sec-WebSocket-Version", value: "13"))
            return .reject(response)
        }
        return .accept(HTTPResponse(status: 101, headers: [
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", WebSocketAccept.value(forKey: key)),
        ]))
    }

    /// Scans comma-separated lists (RFC 9110 section 5.6.1) in one pass for
    /// an element equal to `token`, ignoring ASCII case and surrounding
    /// whitespace. Returns nil as soon as more than `limit` elements (empty
    /// ones included) have been seen across all `values`.
    static func listContains(_ values: [String], token: String, limit: Int) -> Bool? {
        let wanted = Array(token.utf8).map(httpASCIILower)
        var elements = 0
        var found = false
        for value in values {
            let bytes = Array(value.utf8)
            var start = 0
            while true {
                elements += 1
                if elements > limit { return nil }
                var end = start
                while end < bytes.count && bytes[end] != UInt8(ascii: ",") { end += 1 }
                var lo = start, hi = end
                while lo < hi && (bytes[lo] == 0x20 || bytes[lo] == 0x09) { lo += 1 }
                while hi > lo && (bytes[hi - 1] == 0x20 || bytes[hi - 1] == 0x09) { hi -= 1 }
                if hi - lo == wanted.count && zip(bytes[lo..<hi], wanted).allSatisfy({ httpASCIILower($0) == $1 }) {
                    found = true
                }
                if end >= bytes.count { break }
                start = end + 1
            }
        }
        return found
    }
}
