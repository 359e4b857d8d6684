import Foundation
import ChatProtocol
import ConformanceHarness

/// Inputs for the ways in that are read in process: recordings, scenario files, driver
/// lines and command lines. Each starts from a valid input and breaks one thing in it
/// with ``FuzzValues``.
struct SurfaceGenerators: Sendable {
    /// Option names of each `mockchat` subcommand (empty: no command-line inputs).
    var commands: [(name: String, options: [String])] = []

    // MARK: Recordings

    /// A short valid recording: a login, the server's reply, a fault, a push and a close.
    static let recording: [JSONValue] = [
        ["format": "mockchat-trace", "version": 1, "clock": "virtual", "start": 1_700_000_000.0, "fixtures": [:]],
        ["seq": 1, "t": 1_700_000_000.0, "kind": "open", "conn": "c1", "text": "127.0.0.1"],
        ["seq": 2, "t": 1_700_000_000.0, "kind": "in", "conn": "c1", "uid": "bob", "device": "p",
         "frame": ["id": 1, "op": "login", "uid": "bob", "authKey": "<redacted>", "deviceId": "p"]],
        ["seq": 3, "t": 1_700_000_000.0, "kind": "out", "conn": "c1", "uid": "bob", "device": "p",
         "frame": ["id": 1, "result": ["user": ["uid": "bob", "status": "online", "lastActiveAt": 1_700_000_000.0],
                                       "connectionId": "c1", "serverTime": 1_700_000_000.0]]],
        ["seq": 4, "t": 1_700_000_001.5, "kind": "control", "route": "POST /control/faults",
         "frame": ["fault": "delay", "ms": 250, "uid": "bob"], "text": "fault delay on"],
        ["seq": 5, "t": 1_700_000_002.0, "kind": "control", "route": "POST /control/push",
         "frame": ["uid": "bob", "event": ["event": "x"]], "text": "push"],
        ["seq": 6, "t": 1_700_000_003.0, "kind": "control", "route": "DELETE /control/faults", "text": "faults cleared"],
        ["seq": 7, "t": 1_700_000_030.0, "kind": "close", "conn": "c1", "uid": "bob", "device": "p", "code": 4002,
         "text": "server closes: no frame within the heartbeat timeout"],
    ]

    func recording(_ random: inout FuzzRandom) -> WireInput {
        var lines = Self.recording.map(\.description)
        let what: String
        switch random.below(10) {
        case 0...6:
            let index = random.below(lines.count)
            let (value, label) = FuzzValues.mutate(Self.recording[index], &random)
            lines[index] = value.description
            what = index == 0 ? "header \(label)" : "entry \(label)"
        case 7:
            lines.remove(at: random.int(in: 1...lines.count - 1))
            what = "line removed"
        case 8:
            lines.insert(FuzzValues.rawText(&random), at: random.int(in: 1...lines.count))
            what = "raw line"
        default:
            let last = lines.removeLast()
            lines.append(String(last.prefix(random.below(last.count))))
            what = "cut short"
        }
        return WireInput(stage: .recording, label: "recording/" + what, bytes: Array(lines.joined(separator: "\n").utf8) + [10],
                         expectation: .reply)
    }

    // MARK: Scenario files

    /// Counts written with digits only (expressions take no exponent): at and past the
    /// 10,000 retries a backoff function counts, and past Int64.
    static let expressionCounts = ["10000", "10001", "300000000", "9223372036854775808", String(repeating: "9", count: 40), "0.5"]

    /// YAML scalars a JSON text cannot hold, or numbers past every range.
    static let yamlNumbers = [".inf", "-.inf", ".nan", "1e999", "1e308", "-1e308", "99999999999999999999", "0x7fffffffffffffff"]

    func scenario(_ random: inout FuzzRandom) -> WireInput {
        let file = random.pick(EmbeddedCatalogue.files)
        var lines = file.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let numbered = lines.indices.filter { lines[$0].range(of: #": [0-9][0-9.]*(ms|s|m)?$"#, options: .regularExpression) != nil }
        if random.chance(0.1) {
            // A number written as a parameter expression (docs/SPECIFICATION.md): a retry count past every range.
            let count = random.pick(Self.expressionCounts)
            let expression = random.pick(["$backoffTotal(\(count))", "$backoff(\(count))", "$backoffTotal(2) * \(count)",
                                          "$keepAliveInterval * \(count)", "$backoff(0 - \(count))"])
            let list = "\"$backoffTimes(0, \(count))\""
            let text = "id: fuzz/expression\ntitle: t\nsource: s\nprofile: cometchat-ios\nsteps:\n  - client: a\n  - a.init: {}\n"
                + "  - advance: \(expression)\n  - expect: { a.connectAttempts: { at: [\(list)] } }\n"
            return WireInput(stage: .scenario, label: "scenario/expression", bytes: Array(text.utf8), expectation: .reply)
        }
        if random.chance(0.3), !numbered.isEmpty {
            let index = random.pick(numbered)
            let colon = lines[index].range(of: ": ", options: .backwards)!
            lines[index] = lines[index][..<colon.upperBound] + random.pick(Self.yamlNumbers)
            return WireInput(stage: .scenario, label: "scenario/yaml number", bytes: Array(lines.joined(separator: "\n").utf8),
                             expectation: .reply)
        }
        guard let document = try? ScenarioLoader.document(yaml: file.text) else {
            return WireInput(stage: .scenario, label: "scenario/as written", bytes: Array(file.text.utf8), expectation: .reply)
        }
        let (value, label) = FuzzValues.mutate(document, &random)
        return WireInput(stage: .scenario, label: "scenario/" + label.prefix(24), bytes: Array(value.description.utf8),
                         expectation: .reply)
    }

    // MARK: Driver lines

    /// A scenario's messages to a driver, as the harness sends them (docs/DRIVER.md).
    static let driverSession: [JSONValue] = [
        ["type": "start", "id": 1, "scenario": "fuzz", "seed": 7,
         "server": ["url": "ws://127.0.0.1:9/v1/ws", "host": "127.0.0.1", "port": 9, "path": "/v1/ws"],
         "app": ["appId": "mockchat-local", "region": "us", "authKey": "mockchat-dev-key"],
         "clock": ["mode": "virtual", "now": 1_700_000_000_000]],
        ["type": "command", "id": 2, "client": "a", "command": "create",
         "args": ["profile": "cometchat-ios", "device": "a-device", "platform": "mobile", "seed": 3]],
        ["type": "command", "id": 3, "client": "a", "command": "init",
         "args": ["autoEstablishSocketConnection": true, "presence": "all", "region": "us", "deviceId": "a-device", "platform": "mobile"]],
        ["type": "command", "id": 4, "client": "a", "command": "login", "args": ["uid": "alice", "authKey": "mockchat-dev-key"]],
        ["type": "advance", "id": 5, "to": 1_700_000_030_000],
        ["type": "command", "id": 6, "client": "a", "command": "fetchNext", "args": ["request": "r", "limit": 30, "status": "online"]],
        ["type": "command", "id": 7, "client": "a", "command": "network", "args": ["condition": "down"]],
        ["type": "settle", "id": 8],
        ["type": "command", "id": 9, "client": "a", "command": "inspect", "args": [:]],
        ["type": "end", "id": 10],
    ]

    func driverLines(_ random: inout FuzzRandom) -> WireInput {
        var lines = Self.driverSession.map(\.description)
        let what: String
        if random.chance(0.85) {
            let index = random.below(lines.count)
            let (value, label) = FuzzValues.mutate(Self.driverSession[index], &random)
            lines[index] = value.description
            what = (Self.driverSession[index]["command"] ?? Self.driverSession[index]["type"])?.stringValue.map { "\($0) \(label)" } ?? label
        } else {
            lines.insert(FuzzValues.rawText(&random), at: random.below(lines.count))
            what = "raw line"
        }
        return WireInput(stage: .driverLine, label: "driver/" + what.prefix(32), bytes: Array(lines.joined(separator: "\n").utf8),
                         expectation: .reply)
    }

    // MARK: Manifests

    /// A manifest declaring a value for each kind of parameter (docs/SPECIFICATION.md).
    static let manifest: JSONValue = [
        "sdk": ["name": "fuzz", "version": "1.0.0"],
        "parameters": ["keepAliveInterval": 13, "pongTimeout": 7, "loginReplyTimeout": 6,
                       "reconnectBackoff": ["steps": [0.1, 0.3, 0.7], "repeatEvery": 50],
                       "backgroundCloseCode": 1000, "notInitializedError": "E_NOT_READY", "defaultUsersLimit": 20],
        "features": ["exclude": ["ping"]],
        "waivers": [["rule": "reconnection.backoff-schedule", "reason": "fuzz"]],
    ]

    func manifest(_ random: inout FuzzRandom) -> WireInput {
        if random.chance(0.1) {
            return WireInput(stage: .manifest, label: "manifest/raw", bytes: Array(FuzzValues.rawText(&random).utf8), expectation: .reply)
        }
        let (value, label) = FuzzValues.mutate(Self.manifest, &random)
        return WireInput(stage: .manifest, label: "manifest/" + label.prefix(28), bytes: Array(value.description.utf8), expectation: .reply)
    }

    // MARK: Command lines

    func flags(_ random: inout FuzzRandom) -> WireInput {
        guard !commands.isEmpty else { return WireInput(stage: .flags, label: "flags/none", bytes: [], expectation: .reply) }
        let command = random.pick(commands)
        var arguments = [command.name]
        for _ in 0..<random.int(in: 1...3) where !command.options.isEmpty {
            arguments.append(random.pick(command.options))
            let value = FuzzValues.any(&random)
            arguments.append(value.stringValue ?? value.description)
        }
        if random.chance(0.1) { arguments.append(random.pick(["--", "-", "--=", "-x", "--help", "\u{0}"])) }
        return WireInput(stage: .flags, label: "flags/" + command.name, bytes: Array(arguments.joined(separator: "\n").utf8),
                         expectation: .reply)
    }
}
