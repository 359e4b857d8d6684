"""Error codes the SDK raises itself, with the descriptions the SDK documents give them
(000_b8b030ded7652e86.txt and 004_376028ecd0ea17fe.txt, "Common Error Codes"). For the
two connection errors, 000 also shows the errorDescription an app receives ("Connect to
the web-socket server", "Ping the server"); that text wins over the table's short name."""

ALREADY_CONNECTED = "ERROR_WEBSOCKETS_ALLREADY_IN_CONNECTED_STATE"
PING_NOT_AVAILABLE = "ERROR_PING_NOT_AVAILABLE"
NOT_LOGGED_IN = "ERR_NOT_LOGGED_IN"
WEBSOCKET_ERROR = "ERR_WEBSOCKET_ERROR"
NO_INTERNET = "ERR_NO_INTERNET"
UID_NOT_FOUND = "ERR_UID_NOT_FOUND"
INVALID_LIMIT = "ERR_INVALID_LIMIT"
# Project codes (MockChat docs/CONFORMANCE.md): the documents name none for these cases.
NOT_INITIALIZED = "ERR_NOT_INITIALIZED"
ALREADY_LOGGED_IN = "ERR_ALREADY_LOGGED_IN"
RECONNECT_KICK_REFUSED = "ERR_RECONNECT_KICK_REFUSED"
MALFORMED_REPLY = "ERR_MALFORMED_REPLY"

DESCRIPTIONS = {
    ALREADY_CONNECTED: "Web sockets connect called while web sockets are already connected",
    PING_NOT_AVAILABLE: "Ping function is not available when auto establish web socket is on",
    NOT_LOGGED_IN: "No user is logged in",
    WEBSOCKET_ERROR: "WebSocket connection error",
    NO_INTERNET: "No internet connection",
    UID_NOT_FOUND: "User with specified UID does not exist",
    INVALID_LIMIT: "Invalid limit value provided",
    NOT_INITIALIZED: "init() has not been called",
    ALREADY_LOGGED_IN: "A user is already logged in; call logout() first",
    MALFORMED_REPLY: "The server's reply could not be read",
}


class ChatError(Exception):
    """An error the SDK reports to the app: a stable code and a human description."""

    def __init__(self, code: str, description: str | None = None):
        super().__init__(code)
        self.code = code
        self.description = description if description is not None else DESCRIPTIONS.get(code, code)

    def __repr__(self) -> str:
        return f"ChatError({self.code!r}, {self.description!r})"
