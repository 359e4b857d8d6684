import ChatProtocol

/// Errors the reference client raises itself, besides the catalogue in ``ErrorCode``.
public enum SDKError {
    /// A call before `initialize`. Project choice: the documents name no code for it.
    public static let notInitialized = ChatError(code: "ERR_NOT_INITIALIZED",
                                                 description: "initialize() has not been called")
    /// A reply the client could not read. Project choice.
    public static let malformedReply = ChatError(code: "ERR_MALFORMED_REPLY",
                                                 description: "The server's reply could not be read")

    /// The transport error for a call that needs a live connection: `ERR_NO_INTERNET`
    /// without a network, `ERR_WEBSOCKET_ERROR` otherwise (000, "Common Error Codes").
    public static func notConnected(network: NetworkCondition, _ detail: String) -> ChatError {
        network == .down ? ChatError(.noInternet) : ChatError(.webSocketError, detail)
    }
}
