import ChatProtocol

/// Large, plain fixtures for load runs: `count` users named `user-0`, `user-1`, …
/// with no relations, and the built-in app settings.
///
/// The names are predictable so that a load generator can log in as user i without
/// reading the file (``uid(_:)``).
public enum FixtureGenerator {
    /// The uid of user `index`.
    public static func uid(_ index: Int) -> String { "user-\(index)" }

    /// `users.json` for `count` users, one per line.
    public static func usersJSON(count: Int) -> String {
        var lines: [String] = []
        lines.reserveCapacity(count)
        for index in 0..<count {
            let user: JSONValue = [
                "uid": .string(uid(index)), "name": .string("User \(index)"), "role": "default",
                "lastActiveAt": 1_700_000_000,
            ]
            lines.append("    " + user.serialized())
        }
        return "{\n  \"users\": [\n" + lines.joined(separator: ",\n") + "\n  ]\n}\n"
    }

    /// `app.json`: the built-in settings.
    public static var appJSON: String { EmbeddedFixtures.app }
}
