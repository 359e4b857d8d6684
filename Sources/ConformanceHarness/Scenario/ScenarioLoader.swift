import ChatProtocol
import Foundation

/// Reads scenario files and checks their shape before anything runs.
public enum ScenarioLoader {
    /// Loads every `*.yaml` / `*.yml` under the given files or folders, sorted by path.
    public static func loadAll(paths: [String]) throws(ScenarioError) -> [Scenario] {
        var files: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                throw ScenarioError("\(path): no such file or folder")
            }
            guard isFolder.boolValue else {
                files.append(path)
                continue
            }
            let walker = FileManager.default.enumerator(atPath: path)
            while let entry = walker?.nextObject() as? String {
                if entry.hasSuffix(".yaml") || entry.hasSuffix(".yml") { files.append(path + "/" + entry) }
            }
        }
        var scenarios: [Scenario] = []
        for file in files.sorted() {
            guard let data = FileManager.default.contents(atPath: file) else { throw ScenarioError("\(file): cannot read") }
            do throws(ScenarioError) {
                scenarios.append(try load(String(decoding: data, as: UTF8.self), path: file))
            } catch {
                throw ScenarioError("\(file): \(error.description)")
            }
        }
        var seen: [String: String] = [:]
        for scenario in scenarios {
            if let other = seen.updateValue(scenario.path, forKey: scenario.id) {
                throw ScenarioError("scenario id '\(scenario.id)' is used by \(other) and \(scenario.path)")
            }
        }
        return scenarios
    }

    /// Parses one step written as YAML or JSON (used by generators of scenarios).
    public static func step(_ raw: JSONValue, number: Int) throws(ScenarioError) -> Step {
        Step(number: number, action: try parseStep(raw), text: raw.description)
    }

    /// Parses one scenario document.
    public static func load(_ text: String, path: String = "<memory>") throws(ScenarioError) -> Scenario {
        let document = try YAMLDocument.parse(text)
        guard let root = document.objectValue else { throw ScenarioError("the top level must be a mapping") }
        func field(_ key: String) throws(ScenarioError) -> String {
            guard let value = root[key]?.stringValue, !value.isEmpty else {
                throw ScenarioError("'\(key)' is required and must be a string")
            }
            return value
        }
        guard let rawSteps = root["steps"]?.arrayValue, !rawSteps.isEmpty else {
            throw ScenarioError("'steps' must be a non-empty list")
        }
        var steps: [Step] = []
        for (index, raw) in rawSteps.enumerated() {
            do throws(ScenarioError) {
                steps.append(try step(raw, number: index + 1))
            } catch {
                throw ScenarioError("step \(index + 1) (\(raw.description.prefix(120))): \(error.description)")
            }
        }
        let seed = root["seed"]?.intValue ?? 1
        return Scenario(id: try field("id"), title: try field("title"), source: try field("source"),
                        profile: root["profile"]?.stringValue ?? "cometchat-ios", app: root["app"],
                        seed: UInt64(bitPattern: seed), skip: root["skip"]?.stringValue, steps: steps, path: path)
    }

    private static let modifiers: Set<String> = ["expect_error", "expect_status", "profile", "device", "platform", "body"]

    private static func parseStep(_ raw: JSONValue) throws(ScenarioError) -> StepAction {
        guard let object = raw.objectValue else { throw ScenarioError("a step must be a mapping") }
        let actions = object.keys.filter { !modifiers.contains($0) }
        guard actions.count == 1, let key = actions.first, let value = object[key] else {
            throw ScenarioError("a step needs exactly one action key, found \(actions)")
        }
        switch key {
        case "client":
            guard let name = value.stringValue else { throw ScenarioError("'client' takes a name") }
            var platform: Platform?
            if let text = object["platform"]?.stringValue {
                guard let parsed = Platform(rawValue: text) else { throw ScenarioError("unknown platform '\(text)'") }
                platform = parsed
            }
            return .client(name: name, profile: object["profile"]?.stringValue, device: object["device"]?.stringValue,
                           platform: platform)
        case "wire":
            guard let name = value.stringValue else { throw ScenarioError("'wire' takes a name") }
            return .wire(name: name)
        case "advance":
            return .advance(milliseconds: try duration(value))
        case "expect", "expect_not":
            guard let assertions = value.objectValue, !assertions.isEmpty else {
                throw ScenarioError("'\(key)' takes a mapping of subject.property: value")
            }
            var expectations: [Expectation] = []
            for (name, expected) in assertions {
                guard let dot = name.firstIndex(of: ".") else {
                    throw ScenarioError("'\(name)' must be subject.property (e.g. a.status, server.online)")
                }
                expectations.append(Expectation(subject: String(name[..<dot]), property: String(name[name.index(after: dot)...]),
                                                value: expected))
            }
            return .expect(expectations, negated: key == "expect_not")
        default:
            guard let dot = key.firstIndex(of: ".") else { throw ScenarioError("unknown step '\(key)'") }
            let subject = String(key[..<dot]), method = String(key[key.index(after: dot)...])
            if subject == "server" {
                return try controlStep(method, value, expectStatus: object["expect_status"]?.intValue)
            }
            return .call(client: subject, method: method, arguments: value, expectError: object["expect_error"]?.stringValue)
        }
    }

    /// `server.fault: {...}`, `server.reset: {}`, `server.app: {...}`, `server.users: [...]`,
    /// or the general `server.control: {method, path, body}`.
    private static func controlStep(_ name: String, _ value: JSONValue, expectStatus: Int64?) throws(ScenarioError) -> StepAction {
        let status = Int(expectStatus ?? 200)
        switch name {
        case "fault": return .control(method: "POST", path: "/control/faults", body: value, expectStatus: status)
        case "clearFaults": return .control(method: "DELETE", path: "/control/faults", body: .null, expectStatus: status)
        case "reset": return .control(method: "POST", path: "/control/reset", body: .null, expectStatus: status)
        case "app": return .control(method: "POST", path: "/control/fixtures", body: ["app": value], expectStatus: status)
        case "control":
            guard let method = value["method"]?.stringValue, let path = value["path"]?.stringValue else {
                throw ScenarioError("server.control needs 'method' and 'path'")
            }
            return .control(method: method, path: path, body: value["body"] ?? .null, expectStatus: status)
        default:
            throw ScenarioError("unknown server step '\(name)' (fault, clearFaults, reset, app, control)")
        }
    }

    /// A number of seconds, or a string such as `250ms`, `30s`, `2m`, `1h`.
    public static func duration(_ value: JSONValue) throws(ScenarioError) -> Int64 {
        if let seconds = value.doubleValue, seconds >= 0 { return Int64((seconds * 1000).rounded()) }
        guard let text = value.stringValue else { throw ScenarioError("a duration is seconds or a string like 30s") }
        let units: [(String, Double)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let number = Double(text.dropLast(suffix.count)), number >= 0 { return Int64((number * scale).rounded()) }
        }
        throw ScenarioError("cannot read duration '\(text)'")
    }
}
