import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import ReferenceClient

/// Runs one scenario: a loop with a virtual clock, a server, reference clients, and
/// the steps in order. The first step that fails ends the run with its message.
public struct ScenarioRunner: Sendable {
    public var options: CatalogueRunner.Options
    /// Where `<profile>.yaml` files live; nil: the profiles built into the binary.
    public var profilesFolder: String?

    public init(options: CatalogueRunner.Options) {
        self.options = options
        profilesFolder = options.profilesFolder
    }

    public func run(_ scenario: Scenario) -> ScenarioResult {
        run(scenario, recording: nil)
    }

    /// Runs `scenario` and records every client after each step (see ``ClientRecord``).
    /// A call's error does not fail its step here: it is recorded as the call's result.
    /// The records hold one entry per step that ran.
    public func record(_ scenario: Scenario) -> (ScenarioResult, [[String: ClientRecord]]) {
        var records: [[String: ClientRecord]] = []
        let result = run(scenario) { session throws(ScenarioError) in records.append(try session.record()) }
        return (result, records)
    }

    private func run(_ scenario: Scenario,
                     recording: ((ScenarioSession) throws(ScenarioError) -> Void)?) -> ScenarioResult {
        var result = ScenarioResult(id: scenario.id, title: scenario.title, source: scenario.source, path: scenario.path,
                                    verdict: .passed, traceTail: [], trace: [], wallSeconds: 0, virtualSeconds: 0)
        if let reason = scenario.skip {
            result.verdict = .skipped
            result.message = reason
            return result
        }
        let waits = scenario.steps.reduce(Int64(0)) { total, step in
            if case .advance(let milliseconds) = step.action { total + milliseconds } else { total }
        }
        if options.wallClock, Double(waits) / 1000 > options.maxWait {
            result.verdict = .skipped
            result.message = "needs \(Double(waits) / 1000) s of real time in wall-clock mode (more than --max-wait)"
            return result
        }
        let started = Stopwatch()
        let loop: EventLoop
        do {
            loop = try EventLoop(clockMode: options.wallClock ? .system : .virtual(start: .virtualEpoch))
        } catch {
            result.verdict = .failed
            result.message = "cannot create an event loop: \(error)"
            return result
        }
        var session: ScenarioSession?
        var stepTimes: [(step: Int, at: Double, afterSequence: Int?)] = []
        var link: DriverLink?
        do {
            if let source = options.driver {
                let driver = try DriverLink(channel: try source.channel(), loop: loop, timeout: options.driverTimeout)
                link = driver
                if let reason = driver.capabilities.missing(for: scenario) {
                    driver.end()
                    loop.shutdown()
                    result.verdict = .skipped
                    result.message = "\(driver.sdkDescription): \(reason)"
                    return result
                }
                guard driver.capabilities.virtualTime || options.wallClock else {
                    throw ScenarioError("driver \(driver.channel.label) does not control time (virtualTime: false); "
                        + "run it with --wall-clock")
                }
            }
            // The server starts once the driver is up: an in-process server's trace origin is
            // its creation time, and in wall-clock mode a driver's start-up (a Python or JVM
            // process) must not count as scenario time.
            let server = try makeServer(scenario, loop: loop)
            if let driver = link {
                try driver.request("start", startFields(scenario, server: server, loop: loop), doing: "start")
            }
            let timeline = Timeline(loop: loop, server: server, driver: link, wallClock: options.wallClock,
                                    settleTimeout: options.driverTimeout)
            let live = ScenarioSession(scenario: scenario, timeline: timeline, seed: options.seed ?? scenario.seed,
                                       profilesFolder: profilesFolder, declared: options.manifest?.parameters ?? [:],
                                       tolerance: options.wallClock ? options.tolerance : 0.001)
            live.callErrorsFail = recording == nil
            session = live
            // A recording keeps the written order: it observes the clients after each step.
            for step in recording == nil ? LifecycleHandlers.deliveryOrder(scenario.steps) : scenario.steps {
                stepTimes.append((step.number, live.elapsedSeconds, live.lastTraceSequence))
                options.stepLog?(String(format: "%@ %8.3fs step %d: %@", scenario.id, live.elapsedSeconds, step.number,
                                        String(step.text.prefix(160))))
                do throws(ScenarioError) {
                    try live.perform(step)
                    try recording?(live)
                } catch {
                    if let driver = link, let reason = driver.unsupported {
                        result.verdict = .skipped
                        result.message = "\(driver.sdkDescription) does not support \(reason) (step \(step.number))"
                        result.failedStep = step.number
                        break
                    }
                    result.verdict = .failed
                    result.failedStep = step.number
                    result.failedAt = live.elapsedSeconds
                    result.message = "step \(step.number): \(step.text)\n\(error.description)"
                    options.stepLog?("\(scenario.id) step \(step.number) FAILED")
                    break
                }
            }
        } catch {
            result.verdict = .failed
            result.message = "set-up failed: \(error)"
            link?.end()
        }
        if let session {
            let entries = (try? session.server.trace()) ?? []
            let lines = entries.map(\.description)
            result.trace = Array(lines.joined(separator: "\n").utf8)
            let view = TraceView(entries: entries, origin: session.server.traceOrigin)
            if let failedAt = result.failedAt {
                result.traceTail = view.around(failedAt)
                result.clientLogs = session.names.map { ($0, session.recentLog(of: $0, upTo: failedAt)) }
            }
            result.lanes = session.names
            if options.recordTimeline {
                result.timeline = RunTimeline.events(view: view, session: session, steps: scenario.steps,
                                                     stepTimes: stepTimes, failedStep: result.failedStep)
            }
            result.virtualSeconds = session.elapsedSeconds
            if let folder = options.traceDirectory { TraceFiles.write(scenario.id, lines: lines, session: session, to: folder) }
            session.close()
        }
        loop.shutdown()
        result.wallSeconds = started.elapsedSeconds
        return result
    }

    /// The `start` message: the scenario, where the server listens, the app and the clock.
    private func startFields(_ scenario: Scenario, server: ServerUnderTest, loop: EventLoop) -> [(String, JSONValue)] {
        let address = server.address
        let app = AppConfiguration()
        return [
            ("scenario", .string(scenario.id)),
            ("seed", .integer(Int64(bitPattern: options.seed ?? scenario.seed))),
            ("server", ["url": .string("ws://\(address.host):\(address.port)/v1/ws"), "host": .string(address.host),
                        "port": .integer(Int64(address.port)), "path": "/v1/ws"]),
            ("app", ["appId": .string(app.appId), "region": .string(app.region), "authKey": .string(app.authKey)]),
            ("clock", ["mode": options.wallClock ? "system" : "virtual", "now": .integer(loop.clock.now.milliseconds)]),
        ]
    }

    private func makeServer(_ scenario: Scenario, loop: EventLoop) throws -> ServerUnderTest {
        if let url = options.serverURL {
            let remote = try RemoteServer(loop: loop, url: url, wallClock: options.wallClock)
            if let app = scenario.app {
                let reply = try remote.control(method: "POST", path: "/control/fixtures", body: ["app": app])
                guard reply.status == 200 else { throw ScenarioError("the server refused the app settings: \(reply.body)") }
            }
            return remote
        }
        var fixtures = try FixtureSet.embedded()
        if let app = scenario.app {
            do throws(FixtureError) {
                fixtures.settings = try fixtures.settings.applying(app)
            } catch {
                throw ScenarioError("app settings: \(error.description)")
            }
        }
        return try InProcessServer(loop: loop, fixtures: fixtures)
    }
}
