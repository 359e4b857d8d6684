import WireKit

/// A client upgrade request for `/v1/ws` with a fixed key, as text, with any part
/// replaced: the method, the HTTP version, the WebSocket version, extra header lines.
public func handshakeRequest(path: String = "/v1/ws", method: String = "GET", version: String = "HTTP/1.1",
                             key: String = "dGhlIHNhbXBsZSBub25jZQ==", wsVersion: String = "13",
                             extraHeaders: String = "") -> String {
    var lines = UpgradeRequest(host: "127.0.0.1", path: path, key: key).lines
    lines[0] = "\(method) \(path) \(version)"
    lines[lines.count - 1] = "Sec-WebSocket-Version: \(wsVersion)"
    return lines.joined(separator: "\r\n") + "\r\n" + extraHeaders + "\r\n"
}
