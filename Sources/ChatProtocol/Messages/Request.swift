/// The `id` a client puts on a request and the server echoes: a string or an integer.
public enum RequestID: Hashable, Sendable, CustomStringConvertible {
    case string(String)
    case integer(Int64)

    public var json: JSONValue {
        switch self {
        case .string(let value): .string(value)
        case .integer(let value): .integer(value)
        }
    }

    public init?(json: JSONValue) {
        switch json {
        case .string(let value): self = .string(value)
        case .integer(let value): self = .integer(value)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .string(let value): value
        case .integer(let value): String(value)
        }
    }
}

/// The fields of `login` (see docs/PROTOCOL.md).
public struct LoginRequest: Sendable, Equatable {
    /// The user; may be omitted when `token` identifies it.
    public var uid: String?
    /// The app's auth key (development style login).
    public var authKey: String?
    /// A per-user auth token (production style login).
    public var token: String?
    public var deviceId: String
    public var platform: Platform
    public var presence: PresenceSubscription
    /// True when the SDK is reconnecting on its own rather than logging in anew.
    public var reconnect: Bool
    /// 003 "Configure the reconnection kick strategy": when true, a reconnecting mobile
    /// device gives way to a mobile device already online.
    public var reconnectKickEnable: Bool

    public init(uid: String?, authKey: String? = nil, token: String? = nil, deviceId: String,
                platform: Platform, presence: PresenceSubscription = .allUsers,
                reconnect: Bool = false, reconnectKickEnable: Bool = false) {
        self.uid = uid
        self.authKey = authKey
        self.token = token
        self.deviceId = deviceId
        self.platform = platform
        self.presence = presence
        self.reconnect = reconnect
        self.reconnectKickEnable = reconnectKickEnable
    }
}

/// `users.list`: one page of users, optionally only online or only offline ones
/// (004, "Get Online Users" / "Get Offline Users").
public struct UserListQuery: Sendable, Equatable {
    public static let defaultLimit = 30
    public static let limitRange = 1...100
    public var status: UserStatus?
    public var limit: Int
    public var cursor: String?

    public init(status: UserStatus? = nil, limit: Int = defaultLimit, cursor: String? = nil) {
        self.status = status
        self.limit = limit
        self.cursor = cursor
    }
}

/// A client request, one per WebSocket text frame.
public enum Request: Sendable, Equatable {
    case login(LoginRequest)
    case logout
    case ping
    case getUser(uid: String)
    case listUsers(UserListQuery)

    /// The wire name in `op`.
    public var op: String {
        switch self {
        case .login: "login"
        case .logout: "logout"
        case .ping: "ping"
        case .getUser: "users.get"
        case .listUsers: "users.list"
        }
    }

    /// The request as a JSON object carrying `id` and `op`.
    public func json(id: RequestID) -> JSONValue {
        var object = JSONObject([("id", id.json), ("op", .string(op))])
        switch self {
        case .login(let login):
            if let uid = login.uid { object["uid"] = .string(uid) }
            if let key = login.authKey { object["authKey"] = .string(key) }
            if let token = login.token { object["token"] = .string(token) }
            object["deviceId"] = .string(login.deviceId)
            object["platform"] = .string(login.platform.rawValue)
            object["presence"] = login.presence.json
            object["reconnect"] = .bool(login.reconnect)
            object["reconnectKickEnable"] = .bool(login.reconnectKickEnable)
        case .logout, .ping:
            break
        case .getUser(let uid):
            object["uid"] = .string(uid)
        case .listUsers(let query):
            if let status = query.status { object["status"] = .string(status.rawValue) }
            object["limit"] = .integer(Int64(query.limit))
            if let cursor = query.cursor { object["cursor"] = .string(cursor) }
        }
        return .object(object)
    }
}

/// A request with its id.
public struct RequestEnvelope: Sendable, Equatable {
    public var id: RequestID
    public var request: Request

    public init(id: RequestID, request: Request) {
        self.id = id
        self.request = request
    }
}

/// Why a frame is not a valid request; `id` is set when it could be read, so the
/// error reply can echo it.
public struct RequestRejection: Error, Sendable, Equatable {
    public var id: RequestID?
    public var error: ChatError

    public init(id: RequestID?, error: ChatError) {
        self.id = id
        self.error = error
    }
}
