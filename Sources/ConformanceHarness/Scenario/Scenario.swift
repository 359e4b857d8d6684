import ChatProtocol
import ReferenceClient

/// One conformance case: a documented statement turned into steps and expectations.
///
/// Scenario files are YAML (see docs/SCENARIOS.md); the id is hierarchical
/// (`area/topic/case`) and `source` names the seed document and section it checks.
public struct Scenario: Sendable {
    public init(id: String, title: String, source: String, profile: String = "cometchat-ios", app: JSONValue? = nil,
                seed: UInt64 = 1, skip: String? = nil, rules: [String] = [], steps: [Step], path: String = "<generated>") {
        self.id = id
        self.title = title
        self.source = source
        self.profile = profile
        self.app = app
        self.seed = seed
        self.skip = skip
        self.rules = rules
        self.steps = steps
        self.path = path
    }

    public var id: String
    public var title: String
    public var source: String
    /// The client profile used unless a client names another.
    public var profile: String
    /// Server app settings to apply over the fixtures (e.g. `clientKickControl: true`).
    public var app: JSONValue?
    /// Drives handshake keys, frame masks and anything else random.
    public var seed: UInt64
    /// When set, the scenario is skipped with this reason.
    public var skip: String?
    /// Ids of the rules the scenario checks (rule book, docs/SPECIFICATION.md).
    public var rules: [String]
    public var steps: [Step]
    /// The file it came from.
    public var path: String
    /// The rule book's parameters its steps read (`$keepAliveInterval`).
    public var parameters: Set<String> = []
    /// The document as written, kept when it reads parameters so that ``resolved(declaring:ruleBook:)``
    /// can read it again with other values.
    var document: JSONValue?

    /// The scenario with the SDK's declared parameter values in place of MockChat's defaults;
    /// itself when it reads none of them.
    public func resolved(declaring declared: [String: JSONValue], ruleBook: RuleBook = .embedded) throws(ScenarioError) -> Scenario {
        guard let document, !parameters.isDisjoint(with: declared.keys) else { return self }
        var reader = ScenarioReader(locations: SourceLocations(), ruleBook: ruleBook)
        reader.values = ParameterValues(ruleBook: ruleBook, profile: profile, declared: declared)
        do throws(ScenarioError) {
            return try reader.scenario(document, path: path)
        } catch {
            var located = error
            located.file = path
            throw located
        }
    }
}

/// One line of a scenario.
public struct Step: Sendable {
    /// 1-based position in the file's `steps`.
    public var number: Int
    public var action: StepAction
    /// The step as written, for failure messages.
    public var text: String
    /// For an `expect` step resting on decision or parameter rules: their ids (`rule:`/`rules:`).
    public var rules: [String] = []
    /// The parameters its values read (`$pongTimeout`): it rests on their rules too.
    public var parameters: Set<String> = []
    /// For a call on a client: its SDK command, read from the arguments once, when the
    /// file loaded (``CommandTable``).
    public var command: SDKCommand?
}

/// What a step does.
public enum StepAction: Sendable {
    /// Creates a reference client named `name`.
    case client(name: String, profile: String?, device: String?, platform: Platform?)
    /// Opens a bare protocol connection named `name` (see `WireClient`).
    case wire(name: String)
    /// Calls the SDK method `method` on client `client`; `expectError` is the error code
    /// the call must fail with (nil: the call must not fail).
    case call(client: String, method: String, arguments: JSONValue, expectError: String?)
    /// Moves the virtual clock forward.
    case advance(milliseconds: Int64)
    /// A control API request to the server; the reply must have `expectStatus`.
    case control(method: String, path: String, body: JSONValue, expectStatus: Int)
    /// Assertions that must hold now (`negated`: each must not hold).
    case expect([Expectation], negated: Bool)
}

/// `subject.property: value`, e.g. `a.status: connected` or `server.online: [alice]`.
public struct Expectation: Sendable {
    /// What is checked, typed when the file loads.
    public enum Target: Sendable, Equatable {
        case client(ClientProperty)
        case wire(WireProperty)
        case server(ServerProperty)
    }

    /// Properties of a reference (or driven) client.
    public enum ClientProperty: String, Sendable, CaseIterable {
        case status, backgroundTaskEnabled, loggedInUser, connectionEvents, connectionListeners, connectAttempts, received, result,
             lastSeenText
    }

    /// Properties of a wire client.
    public enum WireProperty: String, Sendable, CaseIterable {
        case open, closeCode, frames
    }

    /// Properties of the server.
    public enum ServerProperty: String, Sendable, CaseIterable {
        case online, connections, closed, sent, received
    }

    public init(subject: String, target: Target, value: JSONValue) {
        self.subject = subject
        self.target = target
        self.value = value
    }

    public var subject: String
    public var target: Target
    public var value: JSONValue
    /// The property's name as written.
    public var property: String {
        switch target {
        case .client(let property): property.rawValue
        case .wire(let property): property.rawValue
        case .server(let property): property.rawValue
        }
    }
    public var text: String { "\(subject).\(property): \(value)" }
}
