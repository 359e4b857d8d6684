/// Every error code the project speaks, with where it comes from.
///
/// Codes are strings on the wire (`errorCode`), so the set can grow without breaking
/// clients. Each case documents its wire value and origin: a seed document and section,
/// or "project" for codes the documents do not define but a server needs.
public enum ErrorCode: String, Sendable, CaseIterable, Codable {
    // MARK: From the SDK documents

    /// `ERROR_WEBSOCKETS_ALLREADY_IN_CONNECTED_STATE` (spelling as documented):
    /// connect() while connected. 000, "Common Error Codes". Client side.
    case alreadyConnected = "ERROR_WEBSOCKETS_ALLREADY_IN_CONNECTED_STATE"
    /// `ERROR_PING_NOT_AVAILABLE`: ping() in auto mode. 000, "Common Error Codes". Client side.
    case pingNotAvailable = "ERROR_PING_NOT_AVAILABLE"
    /// `ERR_NOT_LOGGED_IN`: a call that needs a logged-in user. 000 and 004, "Common Error Codes".
    case notLoggedIn = "ERR_NOT_LOGGED_IN"
    /// `ERR_WEBSOCKET_ERROR`: the socket could not be opened or failed. 000, "Common Error Codes". Client side.
    case webSocketError = "ERR_WEBSOCKET_ERROR"
    /// `ERR_NO_INTERNET`: no network. 000, "Common Error Codes". Client side.
    case noInternet = "ERR_NO_INTERNET"
    /// `ERR_UID_NOT_FOUND`: no user with that uid. 004, "Check User Status" and "Common Error Codes".
    case uidNotFound = "ERR_UID_NOT_FOUND"
    /// `ERR_INVALID_LIMIT`: a list limit outside 1...100. 004, "Common Error Codes".
    case invalidLimit = "ERR_INVALID_LIMIT"

    // MARK: Defined by this project

    /// `ERR_AUTH_FAILED`: the auth key or token does not match. Project.
    case authFailed = "ERR_AUTH_FAILED"
    /// `ERR_USER_DEACTIVATED`: the user has a non-zero `deactivatedAt`. Project, after
    /// the user object of 004.
    case userDeactivated = "ERR_USER_DEACTIVATED"
    /// `ERR_ALREADY_LOGGED_IN`: a second login on one socket. Project.
    case alreadyLoggedIn = "ERR_ALREADY_LOGGED_IN"
    /// `ERR_RECONNECT_KICK_REFUSED`: a reconnecting mobile device asked not to displace
    /// the device already online, and one is. Project, after 003 "Reconnection kick strategy".
    case reconnectKickRefused = "ERR_RECONNECT_KICK_REFUSED"
    /// `ERR_BAD_REQUEST`: not JSON, not an object, too deep, or an `id` that is missing or
    /// not a string or integer. Project.
    case badRequest = "ERR_BAD_REQUEST"
    /// `ERR_UNKNOWN_OP`: an `op` the server does not know. Project.
    case unknownOp = "ERR_UNKNOWN_OP"
    /// `ERR_INVALID_FIELD`: a field missing or of the wrong type. Project.
    case invalidField = "ERR_INVALID_FIELD"
    /// `ERR_INVALID_CURSOR`: a paging cursor the server did not issue. Project.
    case invalidCursor = "ERR_INVALID_CURSOR"

    /// The default human description sent as `errorDescription`.
    public var defaultDescription: String {
        switch self {
        // The two texts 000 gives as errorDescription examples (connect() and ping() sections).
        case .alreadyConnected: "Web sockets connect called while web sockets are already connected"
        case .pingNotAvailable: "Ping function is not available when auto establish web socket is on"
        case .notLoggedIn: "No user is logged in"
        case .webSocketError: "The WebSocket connection failed"
        case .noInternet: "There is no network connection"
        case .uidNotFound: "No user has this UID"
        case .invalidLimit: "The limit must be an integer from 1 to 100"
        case .authFailed: "The auth key or token is not valid"
        case .userDeactivated: "This user is deactivated"
        case .alreadyLoggedIn: "This connection is already logged in"
        case .reconnectKickRefused: "Another mobile device is online; this reconnecting device stays offline"
        case .badRequest: "The message is not a valid request"
        case .unknownOp: "Unknown operation"
        case .invalidField: "A field is missing or has the wrong type"
        case .invalidCursor: "The cursor is not valid"
        }
    }
}

/// An error as it travels: a stable code and a description for people.
public struct ChatError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var description: String

    public init(_ code: ErrorCode, _ description: String? = nil) {
        self.code = code.rawValue
        self.description = description ?? code.defaultDescription
    }

    public init(code: String, description: String) {
        self.code = code
        self.description = description
    }
}
