/// The kind of device a session runs on. Device policy treats mobiles apart
/// (003, "Reconnection kick strategy": one mobile device online per user).
public enum Platform: String, Sendable, CaseIterable, Codable {
    case mobile
    case desktop
    case web
}

/// Whose presence a session receives (004, "Presence Subscription").
public enum PresenceSubscription: Sendable, Equatable {
    /// `subscribePresenceForAllUsers()`.
    case allUsers
    /// `subscribePresenceForFriends()`.
    case friends
    /// `subscribePresenceForRoles(_:)`.
    case roles([String])
    /// No presence events (what a client asks for when it subscribes to nothing; a
    /// `login` without `presence` subscribes to all users).
    case none

    /// Wire form: `{"mode":"all"}`, `{"mode":"friends"}`, `{"mode":"roles","roles":[...]}`, `{"mode":"none"}`.
    public var json: JSONValue {
        switch self {
        case .allUsers: ["mode": "all"]
        case .friends: ["mode": "friends"]
        case .roles(let roles): .object(JSONObject([("mode", "roles"), ("roles", .array(roles.map { .string($0) }))]))
        case .none: ["mode": "none"]
        }
    }

    /// Reads the wire form; `nil` when malformed.
    public init?(json: JSONValue) {
        switch json["mode"]?.stringValue {
        case "all": self = .allUsers
        case "friends": self = .friends
        case "none": self = .none
        case "roles":
            guard let roles = json["roles"]?.arrayValue else { return nil }
            let names = roles.compactMap(\.stringValue)
            guard names.count == roles.count else { return nil }
            self = .roles(names)
        default: return nil
        }
    }
}
