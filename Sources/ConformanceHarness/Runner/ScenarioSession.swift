import ChatProtocol
import EventLoop
import Foundation
import MockChatCore
import MockChatServer
import ReferenceClient

/// The live state of one running scenario: its loop, server and named clients.
final class ScenarioSession {
    let scenario: Scenario
    let loop: EventLoop
    let server: ServerUnderTest
    let timeline: Timeline
    let seed: UInt64
    /// Where `<profile>.yaml` files live; nil: the profiles built into the binary.
    let profilesFolder: String?
    /// Parameter values the SDK declares: the reference model's profiles take them, and a
    /// driver gets them with `create`.
    let declared: [String: JSONValue]
    let start: Instant
    /// Default tolerance of `at` checks, in seconds.
    let tolerance: Double
    /// Whether a call's error fails its step when the step does not expect it (false
    /// while recording, where errors are results like any other).
    var callErrorsFail = true
    private(set) var clients: [String: ScenarioClient] = [:]
    private var driverClients: [String: DriverClient] = [:]
    private(set) var wires: [String: WireClient] = [:]
    private(set) var devices: [String: CommandTable.Device] = [:]
    /// Client and wire names in order of declaration.
    private(set) var names: [String] = []
    private var lastCalls: [String: CallID] = [:]
    private var profiles: [String: Profile] = [:]
    /// The server trace, read once per `expect` step by the checks that need it.
    private var stepTrace: [TraceLog.Entry]?

    init(scenario: Scenario, timeline: Timeline, seed: UInt64, profilesFolder: String?,
         declared: [String: JSONValue] = [:], tolerance: Double = 0.001) {
        self.declared = declared
        self.scenario = scenario
        self.timeline = timeline
        loop = timeline.loop
        server = timeline.server
        self.seed = seed
        self.profilesFolder = profilesFolder
        self.tolerance = tolerance
        start = loop.clock.now
        timeline.start()
        timeline.driver?.onEvent = { [unowned self] event throws(ScenarioError) in
            guard let name = event["client"]?.stringValue, let client = driverClients[name] else {
                throw ScenarioError("sent an event for no client of this scenario: \(event)")
            }
            try client.receive(event)
        }
    }

    /// Seconds of virtual time since the scenario began.
    var elapsedSeconds: Double { Double(loop.clock.now.milliseconds - start.milliseconds) / 1000 }

    /// Scenario time of an instant.
    func seconds(_ instant: Instant) -> Double { Double(instant.milliseconds - start.milliseconds) / 1000 }

    func perform(_ step: Step) throws(ScenarioError) {
        switch step.action {
        case .client(let name, let profileName, let device, let platform):
            guard clients[name] == nil else { throw ScenarioError("client '\(name)' already exists") }
            names.append(name)
            let device = CommandTable.Device(deviceId: device ?? "\(name)-device", platform: platform ?? .mobile)
            devices[name] = device
            let clientSeed = seed &+ FNV1a64.hash(name)
            if let driver = timeline.driver {
                let profile = profileName ?? scenario.profile
                let client = try DriverClient(name: name, link: driver, profile: profile,
                                              device: device, seed: clientSeed, parameters: declared(for: profile))
                driverClients[name] = client
                clients[name] = client
            } else {
                let profile = try self.profile(profileName ?? scenario.profile)
                clients[name] = LocalClient(SDKClient(name: name, loop: loop, server: server.address, profile: profile,
                                                      seed: clientSeed))
            }
        case .wire(let name):
            guard clients[name] == nil, wires[name] == nil else { throw ScenarioError("'\(name)' already exists") }
            let wire = WireClient(name: name, loop: loop, server: server.address, seed: seed &+ FNV1a64.hash(name))
            wires[name] = wire
            names.append(name)
            try timeline.settle()
            guard wire.isOpen else { throw ScenarioError("wire client '\(name)' could not connect: \(wire.failure ?? "closed")") }
        case .call(let name, let method, let arguments, _) where wires[name] != nil:
            try wires[name]!.perform(method, arguments)
            try timeline.settle()
        case .call(let name, let method, let arguments, let expectError):
            let client = try self.client(name)
            guard let command = step.command else { throw ScenarioError("\(name).\(method): not an SDK call (\(arguments))") }
            let call = try client.perform(command)
            try timeline.settle()
            guard let call else {
                if let expectError { throw ScenarioError("\(method) returns no result, so it cannot fail with \(expectError)") }
                return
            }
            lastCalls[name] = call
            try check(call: call, of: client, method: method, expectError: expectError)
        case .advance(let milliseconds):
            try timeline.advance(milliseconds: milliseconds)
        case .control(let method, let path, let body, let expectStatus):
            let reply = try server.control(method: method, path: path, body: body)
            try timeline.settle()
            guard reply.status == expectStatus else {
                throw ScenarioError("control \(method) \(path) answered \(reply.status), expected \(expectStatus): \(reply.body)")
            }
        case .expect(let expectations, let negated):
            stepTrace = nil
            defer { stepTrace = nil }
            // Every assertion of the step is checked; all that fail are reported.
            var failures: [String] = []
            for expectation in expectations {
                let outcome = try evaluate(expectation)
                if negated, outcome == nil {
                    failures.append("expected NOT to hold, but it does: \(expectation.text)")
                }
                if !negated, let mismatch = outcome {
                    failures.append("expected: \(expectation.text)\nactual:   \(mismatch)")
                }
            }
            if !failures.isEmpty {
                let heading = failures.count > 1 ? "\(failures.count) of \(expectations.count) assertions failed:\n" : ""
                throw ScenarioError(heading + failures.joined(separator: "\n"))
            }
        }
    }

    private func check(call: CallID, of client: ScenarioClient, method: String, expectError: String?) throws(ScenarioError) {
        let result = client.result(of: call)
        switch (result, expectError) {
        case (nil, nil):
            return
        case (nil, let code?):
            throw ScenarioError("\(method) had not completed; expected it to fail with \(code)")
        case (.failure?, nil) where !callErrorsFail:
            return
        case (.failure(let error)?, nil):
            throw ScenarioError("\(method) failed with \(error.code): \(error.description)")
        case (.failure(let error)?, let code?):
            guard error.code == code else {
                throw ScenarioError("\(method) failed with \(error.code), expected \(code)")
            }
        case (.success(let value)?, let code?):
            throw ScenarioError("\(method) succeeded (\(value)); expected it to fail with \(code)")
        case (.success?, nil):
            return
        }
    }

    func client(_ name: String) throws(ScenarioError) -> ScenarioClient {
        guard let client = clients[name] else { throw ScenarioError("no client named '\(name)' (declare it with `client: \(name)`)") }
        return client
    }

    func lastResult(_ name: String) throws(ScenarioError) -> CallResult? {
        let client = try client(name)
        return lastCalls[name].flatMap { client.result(of: $0) }
    }

    private func profile(_ name: String) throws(ScenarioError) -> Profile {
        if let cached = profiles[name] { return cached }
        do {
            let profile: Profile
            if let profilesFolder {
                profile = try Profile.load(named: name, in: URL(fileURLWithPath: profilesFolder))
            } else if let text = EmbeddedProfiles.files[name] {
                profile = try Profile.decode(yaml: text, origin: "\(name).yaml (built in)")
            } else {
                let known = EmbeddedProfiles.files.keys.sorted()
                throw ScenarioError("no built-in profile '\(name)'" + Suggestion.hint(for: name, among: known))
            }
            let declaredProfile = try profile.applying(declared(for: name))
            profiles[name] = declaredProfile
            return declaredProfile
        } catch let error as ScenarioError {
            throw error
        } catch {
            throw ScenarioError("cannot load profile '\(name)': \(error)")
        }
    }

    /// The declared values of the parameters `profile` has (the Nexconn profile has no
    /// background-task window, whatever the manifest says).
    private func declared(for profile: String) -> [String: JSONValue] {
        declared.filter { RuleBook.embedded.parameterRule($0.key)?.parameter?.defaultValue(profile: profile) != nil }
    }

    /// The server trace, fetched at most once per `expect` step (it grows with the
    /// scenario; only the checks that read it pay for it).
    func serverTrace() throws(ScenarioError) -> [TraceLog.Entry] {
        if let stepTrace { return stepTrace }
        let trace = try server.trace()
        stepTrace = trace
        return trace
    }

    /// The sequence number of the newest trace entry of an in-process server (cheap:
    /// no copy); nil for an external one. Places steps among trace entries.
    var lastTraceSequence: Int? {
        (server as? InProcessServer)?.server.trace.entries.last?.sequence
    }

    /// The trace of this step, read as connections and scenario times.
    func traceView() throws(ScenarioError) -> TraceView {
        TraceView(entries: try serverTrace(), origin: server.traceOrigin)
    }

    /// The server trace as JSON lines.
    func traceLines() -> [String] {
        ((try? server.trace()) ?? []).map(\.description)
    }

    /// Lets clients end their connections before the loop is torn down, and ends the
    /// driver's side of the scenario.
    func close() {
        try? timeline.settle()
        timeline.driver?.end()
    }
}

extension ScenarioSession {
    /// A client's (or wire client's) log up to `time`, keep-alive frames left out, newest last.
    func recentLog(of name: String, upTo time: Double, limit: Int = 10) -> [String] {
        fullLog(of: name).filter { $0.at <= time + 0.0005 && !Self.isKeepAlive($0.line) }
            .suffix(limit).map { String(format: "%9.3fs ", $0.at) + String($0.line.prefix(240)) }
    }

    /// Auth keys and tokens replaced by `<redacted>`, as the server's trace does.
    static func redacted(_ line: String) -> String {
        var text = line
        for marker in [#"authKey\":\""#, #"token\":\""#, #"authKey: ""#, #"loginWithToken(""#] {
            var from = text.startIndex
            while let found = text.range(of: marker, range: from..<text.endIndex) {
                let end = text[found.upperBound...].firstIndex { $0 == "\"" || $0 == "\\" } ?? text.endIndex
                let offset = text.distance(from: text.startIndex, to: found.upperBound)
                text.replaceSubrange(found.upperBound..<end, with: "<redacted>")
                from = text.index(text.startIndex, offsetBy: offset + "<redacted>".count)
            }
        }
        return text
    }

    /// A ping sent, its pong, or the keep-alive timer: the noise of a long wait.
    static func isKeepAlive(_ line: String) -> Bool {
        let plain = line.replacingOccurrences(of: "\\", with: "")
        return plain.contains("\"op\":\"ping\"") || plain.contains("\"pong\":") || line.contains("keepAlive")
            || line.contains("pongTimeout")
    }

    /// Every line of a client's log with its scenario time.
    func fullLog(of name: String) -> [(at: Double, line: String)] {
        if let local = clients[name] as? LocalClient {
            return local.sdk.log.map { entry in
                let text = "\(entry.event)".replacingOccurrences(of: "ReferenceClient.", with: "")
                    .replacingOccurrences(of: "ChatProtocol.", with: "")
                return (seconds(entry.at), Self.redacted(text))
            }
        }
        if let client = clients[name] {
            return client.observations.map { observation in
                let line = observation.connectionEvent.map { "connection \($0)" }
                    ?? observation.userEvent.map { "user \($0.listener) \($0.change) \($0.user.uid)" } ?? "socket opening"
                return (seconds(observation.time), line)
            }
        }
        if let wire = wires[name] {
            return wire.frames.map { (seconds($0.time), "received \($0.message.description)") }
        }
        return []
    }
}
