import ChatProtocol
import EventLoop
import Foundation
import ReferenceClient

/// The live state of one running scenario: its loop, server and named clients.
final class ScenarioSession {
    let scenario: Scenario
    let loop: EventLoop
    let server: ServerUnderTest
    let timeline: Timeline
    let seed: UInt64
    let profilesFolder: String
    let start: Instant
    /// Default tolerance of `at` checks, in seconds.
    let tolerance: Double
    private(set) var clients: [String: ScenarioClient] = [:]
    private var driverClients: [String: DriverClient] = [:]
    private(set) var wires: [String: WireClient] = [:]
    private var devices: [String: CommandBuilder.Device] = [:]
    private var lastCalls: [String: CallID] = [:]
    private var profiles: [String: Profile] = [:]
    /// The server trace, read once per `expect` step by the checks that need it.
    private var stepTrace: [JSONValue]?

    init(scenario: Scenario, timeline: Timeline, seed: UInt64, profilesFolder: String, tolerance: Double = 0.001) {
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
            let device = CommandBuilder.Device(deviceId: device ?? "\(name)-device", platform: platform ?? .mobile)
            devices[name] = device
            let clientSeed = seed &+ Self.stableHash(name)
            if let driver = timeline.driver {
                let client = try DriverClient(name: name, link: driver, profile: profileName ?? scenario.profile,
                                              device: device, seed: clientSeed)
                driverClients[name] = client
                clients[name] = client
            } else {
                let profile = try self.profile(profileName ?? scenario.profile)
                clients[name] = LocalClient(SDKClient(name: name, loop: loop, server: server.address, profile: profile,
                                                      seed: clientSeed))
            }
        case .wire(let name):
            guard clients[name] == nil, wires[name] == nil else { throw ScenarioError("'\(name)' already exists") }
            let wire = WireClient(name: name, loop: loop, server: server.address, seed: seed &+ Self.stableHash(name))
            wires[name] = wire
            try timeline.settle()
            guard wire.isOpen else { throw ScenarioError("wire client '\(name)' could not connect: \(wire.failure ?? "closed")") }
        case .call(let name, let method, let arguments, _) where wires[name] != nil:
            try wires[name]!.perform(method, arguments)
            try timeline.settle()
        case .call(let name, let method, let arguments, let expectError):
            let client = try self.client(name)
            let command = try CommandBuilder.command(method, arguments, device: devices[name]!)
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
            for expectation in expectations {
                let outcome = try evaluate(expectation)
                if negated, outcome == nil {
                    throw ScenarioError("expected NOT to hold, but it does: \(expectation.text)")
                }
                if !negated, let mismatch = outcome {
                    throw ScenarioError("expected: \(expectation.text)\nactual:   \(mismatch)")
                }
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
            let profile = try Profile.load(named: name, in: URL(fileURLWithPath: profilesFolder))
            profiles[name] = profile
            return profile
        } catch {
            throw ScenarioError("cannot load profile '\(name)': \(error)")
        }
    }

    /// The server trace, fetched at most once per `expect` step (it grows with the
    /// scenario; only the checks that read it pay for it).
    func serverTrace() throws(ScenarioError) -> [JSONValue] {
        if let stepTrace { return stepTrace }
        let trace = try server.trace()
        stepTrace = trace
        return trace
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

    /// FNV-1a: a hash that is the same in every process (Swift's `Hasher` is seeded).
    static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }
}
