/// Every name a scenario file may use, checked when the file loads (docs/SCENARIOS.md).
enum ScenarioVocabulary {
    static let topLevelKeys = ["id", "title", "source", "profile", "app", "seed", "skip", "rules", "steps"]
    static let actions = ["client", "wire", "advance", "expect", "expect_not"]
    /// Keys that may sit beside an action, and the actions they go with.
    static let modifiers: [String: String] = [
        "expect_error": "a client call", "expect_status": "a server step",
        "rule": "a client call (an expect step takes it inside its mapping)", "rules": "a client call (an expect step takes it inside its mapping)",
        "profile": "client", "device": "client", "platform": "client",
    ]
    static let serverSteps = ServerShorthand.table.map(\.name) + ["control"]
    static let clientMethods = CommandTable.scenarioNames
    static let wireMethods = ["login", "ping", "logout", "getUser", "listUsers", "send", "sendText", "close", "drop"]

    static let clientProperties = Expectation.ClientProperty.allCases.map(\.rawValue)
    static let wireProperties = Expectation.WireProperty.allCases.map(\.rawValue)
    static let serverProperties = Expectation.ServerProperty.allCases.map(\.rawValue)

    /// Fields of a user object (004 "User Object Properties").
    static let userFields = [
        "uid", "name", "avatar", "link", "role", "status", "statusMessage", "lastActiveAt", "hasBlockedMe",
        "blockedByMe", "deactivatedAt", "tags", "metadata",
    ]
    /// Keys of a `received` pattern besides user fields.
    static let receivedKeys = ["event", "listener", "at", "tolerance", "count", "statusValue"]
    /// First keys of a `result` path.
    static let resultKeys = ["ok", "error", "description", "uids", "users", "next", "status", "flag", "user", "statusValue"]
    /// Keys of the server trace checks; `frame.<path>` reaches into a frame too.
    static let serverCheckKeys: [String: [String]] = [
        "closed": ["by", "code", "uid", "device", "at", "tolerance", "count"],
        "sent": ["to", "device", "event", "uid", "error", "at", "tolerance", "count"],
        "received": ["from", "device", "op", "at", "tolerance", "count"],
    ]
    static let connectAttemptKeys = ["at", "tolerance", "after", "exact"]
    static let connectionsKeys = ["uid", "count"]
}
