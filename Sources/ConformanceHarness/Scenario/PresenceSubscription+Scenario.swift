import ChatProtocol

/// A presence subscription as scenario files write it: `all`, `friends`, `none`, or a
/// list of role names. The one reading and writing of that form, for the loader, the
/// runner and the fuzzers that write scenarios.
extension PresenceSubscription {
    /// Reads the scenario form; `nil` for anything else, a role that is not a string
    /// included (the wire refuses those too).
    public init?(scenarioValue value: JSONValue) {
        switch value {
        case .string("all"): self = .allUsers
        case .string("friends"): self = .friends
        case .string("none"): self = .none
        case .array(let roles):
            let names = roles.compactMap(\.stringValue)
            guard names.count == roles.count else { return nil }
            self = .roles(names)
        default: return nil
        }
    }

    /// The scenario form.
    public var scenarioValue: JSONValue {
        switch self {
        case .allUsers: "all"
        case .friends: "friends"
        case .none: "none"
        case .roles(let roles): .array(roles.map { .string($0) })
        }
    }
}
