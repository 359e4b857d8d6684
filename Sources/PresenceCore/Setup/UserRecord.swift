import ChatProtocol
import MockChatCore

/// A user as the directory stores it: the profile of 004 plus relations.
public struct UserRecord: Sendable, Equatable {
    public var uid: String
    public var name: String?
    public var avatar: String?
    public var link: String?
    public var role: String?
    public var statusMessage: String?
    public var tags: [String]
    public var metadata: JSONObject
    /// Friends of this user; friendship is made symmetric by the directory.
    public var friends: [String]
    /// Users this user has blocked.
    public var blocked: [String]
    /// Unix seconds, 0 when active (004 `deactivatedAt`).
    public var deactivatedAt: Double
    /// Unix seconds of the user's last activity. A user without one counts as last
    /// active when the fixtures were loaded (the server's clock then).
    public var lastActiveAt: Double?
    /// A per-user token accepted by `login` instead of the app's auth key.
    public var authToken: String?

    /// Reads one entry of `users.json`.
    public init(json: JSONValue) throws(FixtureError) {
        guard let object = json.objectValue else { throw FixtureError("a user must be an object") }
        guard let uid = object["uid"]?.stringValue, !uid.isEmpty else {
            throw FixtureError("every user needs a non-empty string 'uid'")
        }
        func string(_ key: String) throws(FixtureError) -> String? {
            guard let value = object[key], !value.isNull else { return nil }
            guard let text = value.stringValue else { throw FixtureError("user \(uid): '\(key)' must be a string") }
            return text
        }
        func strings(_ key: String) throws(FixtureError) -> [String] {
            guard let value = object[key], !value.isNull else { return [] }
            guard let items = value.arrayValue?.compactMap(\.stringValue), items.count == value.arrayValue?.count
            else { throw FixtureError("user \(uid): '\(key)' must be an array of strings") }
            return items
        }
        func number(_ key: String) throws(FixtureError) -> Double {
            guard let value = object[key], !value.isNull else { return 0 }
            guard let number = value.doubleValue else { throw FixtureError("user \(uid): '\(key)' must be a number") }
            // An instant in seconds: checked here, since presence and last-seen texts convert it.
            do {
                return try BoundedNumber.check(number, "'\(key)'", in: 0...BoundedNumber.latestSeconds, unit: "seconds")
            } catch {
                throw FixtureError("user \(uid): \(error)")
            }
        }
        self.uid = uid
        name = try string("name")
        avatar = try string("avatar")
        link = try string("link")
        role = try string("role")
        statusMessage = try string("statusMessage")
        tags = try strings("tags")
        guard object["metadata"].map({ $0.isNull || $0.objectValue != nil }) ?? true else {
            throw FixtureError("user \(uid): 'metadata' must be an object")
        }
        metadata = object["metadata"]?.objectValue ?? JSONObject()
        friends = try strings("friends")
        blocked = try strings("blocked")
        deactivatedAt = try number("deactivatedAt")
        lastActiveAt = object["lastActiveAt"].map { $0.isNull } == false ? try number("lastActiveAt") : nil
        authToken = try string("authToken")
    }

    /// The entry as `users.json` spells it; reading it back gives the same record.
    public var json: JSONValue {
        var object = JSONObject([("uid", .string(uid))])
        for (key, value) in [("name", name), ("avatar", avatar), ("link", link), ("role", role),
                             ("statusMessage", statusMessage), ("authToken", authToken)] {
            if let value { object[key] = .string(value) }
        }
        if !tags.isEmpty { object["tags"] = .array(tags.map { .string($0) }) }
        if !metadata.isEmpty { object["metadata"] = .object(metadata) }
        if !friends.isEmpty { object["friends"] = .array(friends.map { .string($0) }) }
        if !blocked.isEmpty { object["blocked"] = .array(blocked.map { .string($0) }) }
        if deactivatedAt != 0 { object["deactivatedAt"] = .double(deactivatedAt) }
        if let lastActiveAt { object["lastActiveAt"] = .double(lastActiveAt) }
        return .object(object)
    }
}

/// A fixture file that cannot be used, with the reason.
public struct FixtureError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
