import ChatProtocol

/// Every rule the catalogue and the reference model rely on, with the feature tree:
/// `Fixtures/spec/*.yaml`, built into the binary (``EmbeddedRuleBook``).
public struct RuleBook: Sendable {
    /// Rules in the order they were written (files sorted by name).
    public private(set) var rules: [Rule]
    public var features: FeatureTree
    private var byId: [String: Int]
    private var byParameter: [String: Int]

    /// A book of these rules; the caller has checked them (``RuleBookReader`` does).
    public init(rules: [Rule], features: FeatureTree) {
        self.rules = rules
        self.features = features
        byId = Dictionary(rules.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        byParameter = Dictionary(rules.enumerated().compactMap { index, rule in rule.parameter.map { ($0.name, index) } },
                                 uniquingKeysWith: { first, _ in first })
    }

    /// The rule with this id.
    public func rule(_ id: String) -> Rule? { byId[id].map { rules[$0] } }

    /// The parameter rule that owns the parameter `name` (`keepAliveInterval`).
    public func parameterRule(_ name: String) -> Rule? { byParameter[name].map { rules[$0] } }

    /// Every parameter name, sorted.
    public var parameterNames: [String] { byParameter.keys.sorted() }

    /// The rule book built into the binary; a broken book stops the program with its
    /// `file:line` message (a test keeps the embedded copy loadable).
    public static let embedded: RuleBook = {
        do {
            return try RuleBookReader.read(EmbeddedRuleBook.files.map { ("spec/" + $0.path, $0.text) })
        } catch {
            fatalError("the built-in rule book does not load: \(error)")
        }
    }()
}
