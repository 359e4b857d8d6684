import ChatProtocol

/// The users the server knows, their relations, and lookups by uid and token.
public struct UserDirectory: Sendable, Equatable {
    /// Users sorted by uid: the order of `users.list`.
    public private(set) var records: [UserRecord]
    private var indexByUID: [String: Int]
    private var uidByToken: [String: String]
    private var friendPairs: Set<[String]>
    private var friendsByUID: [String: [String]]
    private var blockedUIDs: Set<String>

    /// Builds a directory; uids must be unique and relations must name known users.
    public init(_ users: [UserRecord]) throws(FixtureError) {
        records = users.sorted { $0.uid < $1.uid }
        indexByUID = [:]
        uidByToken = [:]
        friendPairs = []
        friendsByUID = [:]
        blockedUIDs = []
        for (index, record) in records.enumerated() {
            guard indexByUID.updateValue(index, forKey: record.uid) == nil else {
                let positions = users.indices.filter { users[$0].uid == record.uid }.map { "users[\($0)]" }
                throw FixtureError("uid '\(record.uid)' appears twice (\(positions.joined(separator: " and ")))")
            }
            if let token = record.authToken {
                guard uidByToken.updateValue(record.uid, forKey: token) == nil else {
                    throw FixtureError("authToken of '\(record.uid)' is used twice")
                }
            }
        }
        for record in records {
            for other in record.friends + record.blocked where indexByUID[other] == nil {
                throw FixtureError("user '\(record.uid)' names unknown user '\(other)'")
            }
            blockedUIDs.formUnion(record.blocked)
            for friend in record.friends where friendPairs.insert([record.uid, friend].sorted()).inserted {
                friendsByUID[record.uid, default: []].append(friend)
                friendsByUID[friend, default: []].append(record.uid)
            }
        }
    }

    /// Reads `users.json`: `{"users": [...]}`.
    public init(json: JSONValue) throws(FixtureError) {
        guard let list = json["users"]?.arrayValue else { throw FixtureError("expected {\"users\": [...]}") }
        var users: [UserRecord] = []
        for (index, entry) in list.enumerated() {
            do {
                users.append(try UserRecord(json: entry))
            } catch {
                throw FixtureError("users[\(index)]: \(error.description)")
            }
        }
        try self.init(users)
    }

    /// The directory as `users.json` spells it.
    public var json: JSONValue { ["users": .array(records.map(\.json))] }

    public func record(_ uid: String) -> UserRecord? {
        indexByUID[uid].map { records[$0] }
    }

    public func uid(forToken token: String) -> String? { uidByToken[token] }

    /// Friendship is symmetric: either side listing the other makes them friends.
    public func areFriends(_ a: String, _ b: String) -> Bool { friendPairs.contains([a, b].sorted()) }

    /// Everyone `uid` is friends with, either side listing the other (no order promised).
    public func friends(of uid: String) -> [String] { friendsByUID[uid] ?? [] }

    /// Whether any user has blocked `uid`.
    public func isBlockedByAnyone(_ uid: String) -> Bool { blockedUIDs.contains(uid) }

    /// Whether `blocker` has blocked `blocked`.
    public func hasBlocked(_ blocker: String, _ blocked: String) -> Bool {
        record(blocker)?.blocked.contains(blocked) ?? false
    }
}
