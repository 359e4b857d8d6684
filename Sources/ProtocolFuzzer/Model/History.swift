/// A fuzzed history: the server's starting settings and the actions, in order. The
/// seed that produced it also seeds the scenario (handshake keys and masks).
public struct History: Sendable, Equatable {
    public var seed: UInt64
    public var settings: ReferenceModel.Settings
    public var actions: [FuzzAction]

    public init(seed: UInt64, settings: ReferenceModel.Settings, actions: [FuzzAction]) {
        self.seed = seed
        self.settings = settings
        self.actions = actions
    }
}
