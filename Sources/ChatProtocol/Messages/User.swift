/// Online or offline, as in 004 "UserStatus Enum".
public enum UserStatus: String, Sendable, Codable {
    case online
    case offline

    /// The enum's integer raw value in 004 "UserStatus Enum": online 0, offline 1.
    /// (The wire carries the name; this is what an SDK's enum holds.)
    public var documentedRawValue: Int {
        switch self {
        case .online: 0
        case .offline: 1
        }
    }
}

/// The user object of 004 "User Object Properties", as seen by one viewer.
///
/// `hasBlockedMe` and `blockedByMe` depend on who is looking, so the server builds a
/// `User` per recipient from its directory.
public struct User: Sendable, Equatable {
    public var uid: String
    public var name: String?
    public var avatar: String?
    public var link: String?
    public var role: String?
    public var status: UserStatus
    public var statusMessage: String?
    /// Unix seconds of the last activity; for an offline user, when it went offline.
    public var lastActiveAt: Double
    public var hasBlockedMe: Bool
    public var blockedByMe: Bool
    /// Unix seconds when the user was deactivated, 0 when active.
    public var deactivatedAt: Double
    public var tags: [String]
    public var metadata: JSONObject
    /// The object exactly as it arrived, when it was read from a frame; nil when built
    /// locally. Not part of equality.
    public var asReceived: ReceivedJSON = ReceivedJSON(nil)

    /// A value carried along but ignored by `==`.
    public struct ReceivedJSON: Sendable, Equatable {
        public var value: JSONValue?
        public init(_ value: JSONValue?) { self.value = value }
        public static func == (_: ReceivedJSON, _: ReceivedJSON) -> Bool { true }
    }

    public init(uid: String, name: String? = nil, avatar: String? = nil, link: String? = nil,
                role: String? = nil, status: UserStatus = .offline, statusMessage: String? = nil,
                lastActiveAt: Double = 0, hasBlockedMe: Bool = false, blockedByMe: Bool = false,
                deactivatedAt: Double = 0, tags: [String] = [], metadata: JSONObject = JSONObject()) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.link = link
        self.role = role
        self.status = status
        self.statusMessage = statusMessage
        self.lastActiveAt = lastActiveAt
        self.hasBlockedMe = hasBlockedMe
        self.blockedByMe = blockedByMe
        self.deactivatedAt = deactivatedAt
        self.tags = tags
        self.metadata = metadata
    }

    /// Every field, in the documented order; absent strings are `null`.
    public var json: JSONValue {
        func optional(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        return .object(JSONObject([
            ("uid", .string(uid)),
            ("name", optional(name)),
            ("avatar", optional(avatar)),
            ("link", optional(link)),
            ("role", optional(role)),
            ("status", .string(status.rawValue)),
            ("statusMessage", optional(statusMessage)),
            ("lastActiveAt", .double(lastActiveAt)),
            ("hasBlockedMe", .bool(hasBlockedMe)),
            ("blockedByMe", .bool(blockedByMe)),
            ("deactivatedAt", .double(deactivatedAt)),
            ("tags", .array(tags.map { .string($0) })),
            ("metadata", .object(metadata)),
        ]))
    }

    /// Reads a user object; `nil` when `uid` or `status` is missing.
    public init?(json: JSONValue) {
        guard let uid = json["uid"]?.stringValue,
              let status = json["status"]?.stringValue.flatMap(UserStatus.init(rawValue:)) else { return nil }
        self.init(uid: uid, name: json["name"]?.stringValue, avatar: json["avatar"]?.stringValue,
                  link: json["link"]?.stringValue, role: json["role"]?.stringValue, status: status,
                  statusMessage: json["statusMessage"]?.stringValue,
                  lastActiveAt: json["lastActiveAt"]?.doubleValue ?? 0,
                  hasBlockedMe: json["hasBlockedMe"]?.boolValue ?? false,
                  blockedByMe: json["blockedByMe"]?.boolValue ?? false,
                  deactivatedAt: json["deactivatedAt"]?.doubleValue ?? 0,
                  tags: json["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                  metadata: json["metadata"]?.objectValue ?? JSONObject())
        asReceived = ReceivedJSON(json)
    }
}
