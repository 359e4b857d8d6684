import ChatProtocol
import ReferenceClient

/// Turns a parsed scenario document into a ``Scenario``, checking every name and
/// value against ``ScenarioVocabulary`` and reporting the first problem where it was
/// written.
struct ScenarioReader {
    typealias Words = ScenarioVocabulary
    let locations: SourceLocations
    /// Where rule ids are looked up.
    let ruleBook: RuleBook
    /// The values of `$...` expressions; nil: MockChat's defaults for the scenario's profile.
    var values: ParameterValues?
    /// Accepts calls on undeclared names (steps generated one at a time).
    var lenientNames = false
    private var clients: Set<String> = []
    /// The device each declared client runs on, for its `init` command.
    private var devices: [String: CommandTable.Device] = [:]
    /// The SDK command of the last step read, when it called a client.
    private(set) var command: SDKCommand?
    private var wires: Set<String> = []

    init(locations: SourceLocations, ruleBook: RuleBook = .embedded) {
        self.locations = locations
        self.ruleBook = ruleBook
    }

    private func fail(_ message: String, _ path: [String]) -> ScenarioError {
        ScenarioError(message, at: locations.nearest(path))
    }

    mutating func scenario(_ root: JSONValue, path file: String) throws(ScenarioError) -> Scenario {
        guard let object = root.objectValue else { throw fail("the top level must be a mapping of id, title, source, steps", []) }
        for key in object.keys where !Words.topLevelKeys.contains(key) {
            throw fail("unknown top-level key '\(key)'" + Suggestion.hint(for: key, among: Words.topLevelKeys), [key])
        }
        func text(_ key: String, required: Bool, why: String = "") throws(ScenarioError) -> String? {
            guard let value = object[key] else {
                if required { throw fail("'\(key)' is required\(why)", []) }
                return nil
            }
            guard let string = value.stringValue, !string.isEmpty else { throw fail("'\(key)' must be a non-empty string", [key]) }
            return string
        }
        let id = try text("id", required: true, why: " (area/topic/case)")!
        let title = try text("title", required: true)!
        let source = try text("source", required: true, why: ": name the seed document and section the scenario checks")!
        let profile = try text("profile", required: false) ?? "cometchat-ios"
        let skip = try text("skip", required: false)
        var seed: Int64 = 1
        if let value = object["seed"] {
            guard let number = value.intValue else { throw fail("'seed' must be an integer", ["seed"]) }
            seed = number
        }
        if let app = object["app"], app.objectValue == nil { throw fail("'app' must be a mapping of app settings", ["app"]) }
        let rules = try ruleIds(object["rules"], path: ["rules"]) ?? []
        guard let rawSteps = object["steps"] else { throw fail("'steps' is required", []) }
        guard let list = rawSteps.arrayValue, !list.isEmpty else { throw fail("'steps' must be a non-empty list", ["steps"]) }
        let values = self.values ?? ParameterValues(ruleBook: ruleBook, profile: profile)
        var steps: [Step] = []
        var parameters: Set<String> = []
        for (index, written) in list.enumerated() {
            let at = ["steps", String(index)]
            let (raw, used) = try values.substitute(written, path: at, fail: fail)
            let (action, stepRules) = try step(raw, path: at)
            steps.append(Step(number: index + 1, action: action, text: written.description, rules: stepRules, parameters: used,
                              command: command))
            parameters.formUnion(used)
        }
        var scenario = Scenario(id: id, title: title, source: source, profile: profile, app: object["app"],
                                seed: UInt64(bitPattern: seed), skip: skip, rules: rules, steps: steps, path: file)
        scenario.parameters = parameters
        scenario.document = parameters.isEmpty ? nil : root
        return scenario
    }

    /// `rules: [id, ...]` (or one id): every id must be in the rule book.
    private func ruleIds(_ raw: JSONValue?, path: [String]) throws(ScenarioError) -> [String]? {
        guard let raw else { return nil }
        let list = raw.stringValue.map { [JSONValue.string($0)] } ?? raw.arrayValue
        guard let list, !list.isEmpty else { throw fail("'\(path.last!)' takes a rule id or a list of rule ids", path) }
        var ids: [String] = []
        for (index, item) in list.enumerated() {
            let at = raw.arrayValue == nil ? path : path + [String(index)]
            guard let id = item.stringValue else { throw fail("a rule id is a string such as connection.keep-alive-interval", at) }
            guard ruleBook.rule(id) != nil else {
                let near = Suggestion.closest(to: id, among: ruleBook.rules.map(\.id)).map { " (did you mean '\($0)'?)" } ?? ""
                throw fail("unknown rule '\(id)'\(near); the rules are in Fixtures/spec/*.yaml", at)
            }
            ids.append(id)
        }
        return ids
    }

    /// A step's action, and for an `expect` step the rules it names.
    mutating func step(_ raw: JSONValue, path: [String]) throws(ScenarioError) -> (StepAction, [String]) {
        command = nil
        guard let object = raw.objectValue else { throw fail("a step must be a mapping such as `a.login: alice`", path) }
        let actions = object.keys.filter { Words.modifiers[$0] == nil }
        guard let key = actions.first, let value = object[key] else {
            throw fail("a step needs an action: \(Words.actions.joined(separator: ", ")) or name.method", path)
        }
        guard actions.count == 1 else {
            throw fail("one action per step; '\(actions[1])' needs a step of its own", path + [actions[1]])
        }
        let keyPath = path + [key]
        switch key {
        case "client", "wire":
            guard let name = value.stringValue, !name.isEmpty else { throw fail("'\(key)' takes a name", keyPath) }
            guard !clients.contains(name), !wires.contains(name), name != "server" else {
                throw fail("'\(name)' is already declared", keyPath)
            }
            try allowModifiers(key == "client" ? ["profile", "device", "platform"] : [], object, path)
            if key == "wire" {
                wires.insert(name)
                return (.wire(name: name), [])
            }
            clients.insert(name)
            var platform: Platform?
            if let raw = object["platform"] {
                guard let parsed = raw.stringValue.flatMap(Platform.init(rawValue:)) else {
                    throw fail("platform is mobile, desktop or web", path + ["platform"])
                }
                platform = parsed
            }
            for field in ["profile", "device"] where object[field] != nil && object[field]?.stringValue == nil {
                throw fail("'\(field)' must be a string", path + [field])
            }
            devices[name] = CommandTable.Device(deviceId: object["device"]?.stringValue ?? "\(name)-device",
                                                platform: platform ?? .mobile)
            return (.client(name: name, profile: object["profile"]?.stringValue, device: object["device"]?.stringValue,
                            platform: platform), [])
        case "advance":
            try allowModifiers([], object, path)
            do throws(ScenarioError) {
                return (.advance(milliseconds: try ScenarioLoader.duration(value)), [])
            } catch {
                throw fail(error.message, keyPath)
            }
        case "expect", "expect_not":
            try allowModifiers([], object, path)
            guard let assertions = value.objectValue, !assertions.isEmpty else {
                throw fail("'\(key)' takes a mapping of subject.property: value", keyPath)
            }
            var expectations: [Expectation] = []
            var rules: [String] = []
            for (name, expected) in assertions {
                if name == "rule" || name == "rules" {
                    rules += try ruleIds(expected, path: keyPath + [name]) ?? []
                    continue
                }
                expectations.append(try expectation(name, expected, path: keyPath + [name]))
            }
            guard !expectations.isEmpty else { throw fail("'\(key)' needs at least one subject.property: value", keyPath) }
            return (.expect(expectations, negated: key == "expect_not"), rules)
        default:
            guard let dot = key.firstIndex(of: ".") else {
                throw fail("unknown step '\(key)'" + Suggestion.hint(for: key, among: Words.actions), keyPath)
            }
            let subject = String(key[..<dot]), method = String(key[key.index(after: dot)...])
            if subject == "server" {
                try allowModifiers(["expect_status"], object, path)
                return (try controlStep(method, value, object, path: keyPath), [])
            }
            try allowModifiers(wires.contains(subject) ? [] : ["expect_error", "rule", "rules"], object, path)
            if let code = object["expect_error"], code.stringValue == nil {
                throw fail("expect_error takes an error code", path + ["expect_error"])
            }
            command = try checkCall(subject, method, value, path: keyPath)
            // A call whose expected outcome rests on a decision or parameter names it beside expect_error.
            let rules = (try ruleIds(object["rule"], path: path + ["rule"]) ?? []) + (try ruleIds(object["rules"], path: path + ["rules"]) ?? [])
            return (.call(client: subject, method: method, arguments: value, expectError: object["expect_error"]?.stringValue), rules)
        }
    }

    private func allowModifiers(_ allowed: Set<String>, _ object: JSONObject, _ path: [String]) throws(ScenarioError) {
        for key in object.keys {
            if let belongs = Words.modifiers[key], !allowed.contains(key) {
                throw fail("'\(key)' goes with \(belongs) step", path + [key])
            }
        }
    }

    /// Checks a call and reads a client's SDK command, once (``CommandTable``); nil for a wire client.
    private func checkCall(_ subject: String, _ method: String, _ arguments: JSONValue,
                           path: [String]) throws(ScenarioError) -> SDKCommand? {
        if wires.contains(subject) {
            guard Words.wireMethods.contains(method) else {
                throw fail("unknown wire method '\(method)'" + Suggestion.hint(for: method, among: Words.wireMethods), path)
            }
            return nil
        }
        guard clients.contains(subject) || lenientNames else {
            throw fail("no client or wire named '\(subject)'" + hintForName(subject), path)
        }
        // A step on its own cannot tell a client from a wire client: any known method goes.
        if lenientNames, !clients.contains(subject) {
            let known = Words.clientMethods + Words.wireMethods
            guard known.contains(method) else {
                throw fail("unknown method '\(method)'" + Suggestion.hint(for: method, among: known), path)
            }
            // Read as a client's call where it is one; a wire client's arguments may not be.
            let device = CommandTable.Device(deviceId: "\(subject)-device", platform: .mobile)
            return try? CommandTable.scenarioCommand(method, arguments, device: device)
        }
        guard Words.clientMethods.contains(method) else {
            throw fail("unknown client method '\(method)'" + Suggestion.hint(for: method, among: Words.clientMethods), path)
        }
        do throws(ScenarioError) {
            return try CommandTable.scenarioCommand(method, arguments, device: devices[subject]!)
        } catch {
            throw fail("\(method): \(error.message)", path)
        }
    }

    private func hintForName(_ name: String) -> String {
        let declared = (clients.union(wires)).sorted()
        if let best = Suggestion.closest(to: name, among: declared) { return " (did you mean '\(best)'?)" }
        return declared.isEmpty ? " (declare it first with `client: \(name)`)"
            : " (declared: \(declared.joined(separator: ", ")); declare it with `client: \(name)`)"
    }

    /// `server.fault: {...}`, `server.push: {...}`, `server.reset: {}`, `server.app: {...}`, or the general
    /// `server.control: {method, path, body}`.
    private func controlStep(_ name: String, _ value: JSONValue, _ object: JSONObject,
                             path: [String]) throws(ScenarioError) -> StepAction {
        var status = 200
        if let raw = object["expect_status"] {
            guard let code = raw.intValue else { throw fail("expect_status takes an HTTP status", path.dropLast() + ["expect_status"]) }
            status = Int(code)
        }
        if let shorthand = ServerShorthand.entry(name) {
            if let mapping = shorthand.mapping, value.objectValue == nil { throw fail("server.\(name) takes \(mapping)", path) }
            let request = shorthand.request(value)
            return .control(method: request.method, path: request.path, body: request.body, expectStatus: status)
        }
        switch name {
        case "control":
            guard let method = value["method"]?.stringValue, let target = value["path"]?.stringValue else {
                throw fail("server.control needs 'method' and 'path'", path)
            }
            return .control(method: method, path: target, body: value["body"] ?? .null, expectStatus: status)
        default:
            throw fail("unknown server step '\(name)'" + Suggestion.hint(for: name, among: Words.serverSteps), path)
        }
    }

    // MARK: Expectations

    private func expectation(_ name: String, _ expected: JSONValue, path: [String]) throws(ScenarioError) -> Expectation {
        guard let dot = name.firstIndex(of: "."), dot != name.startIndex else {
            throw fail("'\(name)' must be subject.property (e.g. a.status, server.online)", path)
        }
        let subject = String(name[..<dot]), property = String(name[name.index(after: dot)...])
        let known: [String]
        let kind: String
        if subject == "server" {
            (known, kind) = (Words.serverProperties, "server")
        } else if wires.contains(subject) {
            (known, kind) = (Words.wireProperties, "wire")
        } else if clients.contains(subject) {
            (known, kind) = (Words.clientProperties, "client")
        } else if lenientNames {
            let kind = Words.wireProperties.contains(property) ? "wire" : "client"
            let known = kind == "wire" ? Words.wireProperties : Words.clientProperties
            guard known.contains(property) else {
                throw fail("unknown property '\(property)'" + Suggestion.hint(for: property, among: known), path)
            }
            try checkValue(kind, property, expected, path: path)
            return Expectation(subject: subject, target: Self.target(kind, property)!, value: expected)
        } else {
            throw fail("no client or wire named '\(subject)'" + hintForName(subject), path)
        }
        guard known.contains(property) else {
            throw fail("unknown \(kind) property '\(property)'" + Suggestion.hint(for: property, among: known), path)
        }
        try checkValue(kind, property, expected, path: path)
        return Expectation(subject: subject, target: Self.target(kind, property)!, value: expected)
    }

    /// The typed target of a known property of a `client`, `wire` or `server` subject.
    static func target(_ kind: String, _ property: String) -> Expectation.Target? {
        switch kind {
        case "server": Expectation.ServerProperty(rawValue: property).map(Expectation.Target.server)
        case "wire": Expectation.WireProperty(rawValue: property).map(Expectation.Target.wire)
        default: Expectation.ClientProperty(rawValue: property).map(Expectation.Target.client)
        }
    }

    /// Checks the shape of an expected value: pattern keys, paths, matchers, durations.
    private func checkValue(_ kind: String, _ property: String, _ expected: JSONValue, path: [String]) throws(ScenarioError) {
        switch (kind, property) {
        case ("client", "received"):
            try patterns(expected, path: path) { key in
                Words.receivedKeys.contains(key) || ValuePath(key)?.head.map(Words.userFields.contains) == true
            } known: { Words.receivedKeys + Words.userFields }
        case ("client", "result"):
            guard expected.objectValue != nil else { throw fail("result takes a mapping of path: value", path) }
            try patterns(expected, path: path) { key in ValuePath(key)?.head.map(Words.resultKeys.contains) == true }
                known: { Words.resultKeys }
        case ("client", "connectAttempts"):
            try checkAttemptTimes(expected, path: path)
        case ("client", "connectionEvents"):
            if expected.arrayValue?.allSatisfy({ $0.stringValue != nil }) != true && !ValueMatcher.isMatcher(expected) {
                throw fail("connectionEvents takes a list of event names", path)
            }
        case ("client", "connectionListeners"):
            guard let listeners = expected.objectValue, !listeners.isEmpty,
                  listeners.allSatisfy({ _, events in events.arrayValue?.allSatisfy { $0.stringValue != nil } == true }) else {
                throw fail("connectionListeners takes a mapping of listener id: [event names]", path)
            }
        case ("wire", "frames"):
            try patterns(expected, path: path) { key in ["count", "at", "tolerance", "nth"].contains(key) || ValuePath(key) != nil }
                known: { ["count", "at", "tolerance", "nth"] }
            for pattern in expected.arrayValue ?? [expected] {
                if let nth = pattern["nth"], (nth.intValue ?? 0) < 1 { throw fail("nth takes a frame number from 1", path) }
            }
        case ("server", "closed"), ("server", "sent"), ("server", "received"):
            let keys = Words.serverCheckKeys[property] ?? []
            try patterns(expected, path: path) { key in
                keys.contains(key) || (key.hasPrefix("frame.") && ValuePath(String(key.dropFirst(6))) != nil)
            } known: { keys + ["frame.<path>"] }
            for pattern in expected.arrayValue ?? [expected] {
                if let by = pattern["by"], !ValueMatcher.isMatcher(by), !["server", "client", "drop"].contains(by.stringValue ?? "") {
                    throw fail("by is server, client or drop", path)
                }
            }
        case ("server", "connections"):
            if let object = expected.objectValue, !ValueMatcher.isMatcher(expected) {
                for key in object.keys where !Words.connectionsKeys.contains(key) {
                    throw fail("unknown key '\(key)'" + Suggestion.hint(for: key, among: Words.connectionsKeys), path + [key])
                }
            }
        default:
            try checkMatchers(expected, path: path)
        }
    }

    /// `connectAttempts: [times]` or `{at: [times], after, tolerance, exact}`: every time a
    /// duration, so that a misspelt expression is named here rather than never matching.
    private func checkAttemptTimes(_ expected: JSONValue, path: [String]) throws(ScenarioError) {
        var durations: [(JSONValue, [String])] = []
        if let object = expected.objectValue {
            for (key, value) in object {
                guard Words.connectAttemptKeys.contains(key) else {
                    throw fail("unknown key '\(key)'" + Suggestion.hint(for: key, among: Words.connectAttemptKeys), path + [key])
                }
                if key == "exact", value.boolValue == nil { throw fail("'exact' takes true or false", path + [key]) }
                if key == "after" || key == "tolerance" { durations.append((value, path + [key])) }
            }
        }
        guard let times = expected.arrayValue ?? expected["at"]?.arrayValue else {
            throw fail("connectAttempts takes a list of times or {at: [...]}", path)
        }
        let listPath = expected.arrayValue == nil ? path + ["at"] : path
        durations += times.enumerated().map { ($1, listPath + [String($0)]) }
        for (value, at) in durations {
            do throws(ScenarioError) { _ = try ScenarioLoader.duration(value) } catch { throw fail(error.message, at) }
        }
    }

    /// A mapping (or list of mappings) whose keys must satisfy `accepts`.
    private func patterns(_ expected: JSONValue, path: [String], accepts: (String) -> Bool,
                          known: () -> [String]) throws(ScenarioError) {
        let list = expected.arrayValue ?? [expected]
        for (index, pattern) in list.enumerated() {
            let at = expected.arrayValue == nil ? path : path + [String(index)]
            guard let fields = pattern.objectValue else { throw fail("expected a mapping of field: value", at) }
            for (key, value) in fields {
                guard accepts(key) else {
                    let head = ValuePath(key)?.head ?? key
                    throw fail("unknown field '\(key)'" + Suggestion.hint(for: head, among: known()), at + [key])
                }
                if key == "at" || key == "tolerance" {
                    do throws(ScenarioError) { _ = try ScenarioLoader.duration(value) } catch { throw fail(error.message, at + [key]) }
                }
                if key == "count", value.intValue == nil, !ValueMatcher.isMatcher(value) {
                    throw fail("count takes an integer", at + [key])
                }
                try checkMatchers(value, path: at + [key])
            }
        }
    }

    /// Matcher mappings must be well formed; a one-key mapping that looks like a
    /// misspelt matcher (`gte`, `contain`) is an error rather than a literal.
    private func checkMatchers(_ expected: JSONValue, path: [String]) throws(ScenarioError) {
        if let problem = ValueMatcher.problems(expected).first { throw fail(problem, path) }
        guard let object = expected.objectValue, object.count == 1, let key = object.keys.first,
              !ValueMatcher.names.contains(key) else { return }
        let aliases = ["gte": "ge", "lte": "le", "regex": "matches", "match": "matches", "contain": "contains",
                       "includes": "contains", "missing": "absent"]
        if let meant = aliases[key] ?? (key.count >= 4 ? Suggestion.closest(to: key, among: ValueMatcher.names) : nil),
           Suggestion.distance(key, meant) <= 2 || aliases[key] != nil {
            throw fail("unknown matcher '\(key)' (did you mean '\(meant)'?)", path + [key])
        }
    }
}
