import ChatProtocol

/// How binding a rule is (docs/SPECIFICATION.md, "Levels").
public enum RuleLevel: String, Sendable, CaseIterable {
    /// Stated by the vendor documents: breaking it is a failure.
    case documented
    /// The documents are silent or ambiguous and MockChat chose: an SDK may declare that it differs.
    case decision
    /// A value an SDK may set for itself, with MockChat's default.
    case parameter
}

/// One rule of the specification: what an SDK must (or, for a decision, does by default) do.
public struct Rule: Sendable, Equatable {
    /// `<area>.<kebab-name>`, stable and unique, e.g. `connection.keep-alive-interval`.
    public var id: String
    public var level: RuleLevel
    /// The rule in one or two sentences.
    public var text: String
    /// Seed file and section, or `decision: <reasoning>`.
    public var source: String
    /// The node of the feature tree an SDK must implement for the rule to apply.
    public var feature: String
    /// The old docs/CONFORMANCE.md decision number (`D9`), when there is one.
    public var decision: String?
    /// The value an SDK may choose, for `level: parameter`.
    public var parameter: RuleParameter?
    /// Where the rule is written: `file:line`.
    public var origin: String

    /// `id (level): text`, as verdicts cite it.
    public var citation: String { "\(id) (\(level.rawValue)): \(text)" }
}

/// The value a `parameter` rule lets an SDK choose.
public struct RuleParameter: Sendable, Equatable {
    /// What a parameter's value is.
    public enum Unit: String, Sendable, CaseIterable {
        case seconds, code, text, table, count
    }

    /// The name manifests and scenarios use (`$keepAliveInterval`); the profile key when one exists.
    public var name: String
    /// MockChat's value (the first profile's when it is given per profile).
    public var defaultValue: JSONValue
    /// MockChat's value per profile name, when written per profile; a profile not
    /// named there does not have the parameter.
    public var perProfile: [String: JSONValue]
    public var unit: Unit

    /// MockChat's value for `profile`, or nil when that profile does not have the parameter.
    public func defaultValue(profile: String) -> JSONValue? {
        perProfile.isEmpty ? defaultValue : perProfile[profile]
    }
}
