import ChatProtocol

/// Errors the reference client raises itself, besides the catalogue in ``ErrorCode`` and
/// the codes and texts a profile sets (``Profile/notInitializedError`` and others).
public enum SDKError {
    /// A reply the client could not read. Project choice.
    public static let malformedReply = ChatError(code: "ERR_MALFORMED_REPLY",
                                                 description: "The server's reply could not be read")

    /// The transport error for a call that needs a live connection: `ERR_NO_INTERNET`
    /// without a network, `ERR_WEBSOCKET_ERROR` otherwise (000, "Common Error Codes").
    public static func notConnected(network: NetworkCondition, _ detail: String) -> ChatError {
        network == .down ? ChatError(.noInternet) : ChatError(.webSocketError, detail)
    }
}
