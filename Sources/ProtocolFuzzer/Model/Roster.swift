import ChatProtocol
import MockChatServer

/// What the reference model knows about users: who exists, who is deactivated, each
/// user's role and who is friends with whom. Read from the fixture document itself
/// (`users.json`), not from the server's directory type, so the model shares data with
/// the server but no code.
public struct Roster: Sendable {
    public struct Person: Sendable, Equatable {
        public var uid: String
        public var role: String?
        public var deactivated: Bool
    }

    public private(set) var people: [String: Person] = [:]
    /// Unordered friend pairs, stored as "a|b" with a < b.
    private var friendPairs: Set<String> = []

    /// Reads `{"users": [{uid, role, friends, deactivatedAt}, ...]}`.
    public init(usersDocument: JSONValue) {
        for entry in usersDocument["users"]?.arrayValue ?? [] {
            guard let uid = entry["uid"]?.stringValue else { continue }
            let deactivated = (entry["deactivatedAt"]?.doubleValue ?? 0) != 0
            people[uid] = Person(uid: uid, role: entry["role"]?.stringValue, deactivated: deactivated)
            for friend in entry["friends"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                friendPairs.insert(Self.pair(uid, friend))
            }
        }
    }

    /// The users compiled into the server (a copy of Fixtures/users.json).
    public static func embedded() -> Roster {
        Roster(usersDocument: (try? JSONParser.parse(EmbeddedFixtures.users)) ?? .null)
    }

    public func exists(_ uid: String) -> Bool { people[uid] != nil }

    public func isDeactivated(_ uid: String) -> Bool { people[uid]?.deactivated ?? false }

    public func role(_ uid: String) -> String? { people[uid]?.role }

    /// Friendship is symmetric: one side listing the other is enough (PROTOCOL.md §7).
    public func areFriends(_ a: String, _ b: String) -> Bool { friendPairs.contains(Self.pair(a, b)) }

    private static func pair(_ a: String, _ b: String) -> String { a < b ? "\(a)|\(b)" : "\(b)|\(a)" }
}
