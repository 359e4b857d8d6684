import ChatProtocol

/// The fields of one `login` a fuzzed history sends (PROTOCOL.md §4.1).
public struct LoginSpec: Sendable, Equatable {
    public var uid: String
    public var device: String
    public var platform: Platform
    /// Whose presence the connection wants (004, "Real-time Presence").
    public var presence: PresenceSubscription
    public var reconnect: Bool
    public var reconnectKickEnable: Bool
    /// The auth key sent; nil sends the fixtures' key.
    public var authKey: String?

    public init(uid: String, device: String, platform: Platform, presence: PresenceSubscription = .allUsers,
                reconnect: Bool = false, reconnectKickEnable: Bool = false, authKey: String? = nil) {
        self.uid = uid
        self.device = device
        self.platform = platform
        self.presence = presence
        self.reconnect = reconnect
        self.reconnectKickEnable = reconnectKickEnable
        self.authKey = authKey
    }

    /// A copy with one change.
    func with(_ change: (inout LoginSpec) -> Void) -> LoginSpec {
        var copy = self
        change(&copy)
        return copy
    }

    /// The argument of a `NAME.login:` step.
    var stepArgument: JSONValue {
        var object = JSONObject([
            ("uid", .string(uid)), ("device", .string(device)), ("platform", .string(platform.rawValue)),
        ])
        // Defaults of a wire login (subscription to all, no reconnect flags) are left out.
        if presence != .allUsers { object["presence"] = presence.scenarioValue }
        if reconnect { object["reconnect"] = true }
        if reconnectKickEnable { object["reconnectKickEnable"] = true }
        if let authKey { object["authKey"] = .string(authKey) }
        return .object(object)
    }
}
