import ChatProtocol

/// A fuzzed SDK history: the app's profile, the server's app settings, and what the app
/// and its environment do, in order. The seed that produced it also seeds the scenario.
public struct AppHistory: Sendable, Equatable {
    public var seed: UInt64
    /// The behaviour profile of the app's client (`Fixtures/profiles`).
    public var profile: String
    /// Server app settings over the fixtures (`clientKickControl`), or nil for the defaults.
    public var app: JSONValue?
    public var actions: [AppAction]

    public init(seed: UInt64, profile: String, app: JSONValue?, actions: [AppAction]) {
        self.seed = seed
        self.profile = profile
        self.app = app
        self.actions = actions
    }

    /// The same history with other actions.
    func with(_ actions: [AppAction]) -> AppHistory {
        AppHistory(seed: seed, profile: profile, app: app, actions: actions)
    }
}
