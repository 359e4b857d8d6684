import Foundation

/// The `Sec-WebSocket-Accept` computation both sides of the handshake share
/// (RFC 6455 §4.2.2): base64 of the SHA-1 digest of the key followed by ``guid``.
public enum WebSocketAccept {
    /// The fixed GUID appended to the client key (RFC 6455 §1.3).
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The accept value for a client key.
    public static func value(forKey key: String) -> String {
        Data(SHA1Digest.bytes(of: key + guid)).base64EncodedString()
    }
}
