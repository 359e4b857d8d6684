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
        var result = ScenarioResult(id: scenario.id, title: scenario.title, source: scenario.source, path: scenario.path,
                                    verdict: .passed, traceTail: [], trace: [], wallSeconds: 0, virtualSeconds: 0)
        if let reason = scenario.skip {
            result.verdict = .skipped
            result.message = reason
            return result
        }
        let started = DispatchTime.now()
        let loop: EventLoop
        do {
            loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
        } catch {
            result.verdict = .failed
            result.message = "cannot create an event loop: \(error)"
            return result
        }
        var session: ScenarioSession?
        var stepTimes: [(step: Int, at: Double, afterSequence: Int?)] = []
        do {
            let server = try makeServer(scenario, loop: loop)
            let live = ScenarioSession(scenario: scenario, loop: loop, server: server,
                                       seed: options.seed ?? scenario.seed, profilesFolder: profilesFolder)
            session = live
            for step in scenario.steps {
                stepTimes.append((step.number, live.elapsedSeconds, live.lastTraceSequence))
                options.stepLog?(String(format: "%@ %8.3fs step %d: %@", scenario.id, live.elapsedSeconds, step.number,
                                        String(step.text.prefix(160))))
                do throws(ScenarioError) {
                    try live.perform(step)
                } catch {
                    result.verdict = .failed
                    result.failedStep = step.number
                    result.failedAt = live.elapsedSeconds
                    result.message = "step \(step.number): \(step.text)\n\(error.description)"
                    options.stepLog?("\(scenario.id) step \(step.number) FAILED")
                    break
                }
            }
        } catch {
            result.verdict = .error
            result.message = "set-up failed: \(error)"
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
            result.timeline = RunTimeline.events(view: view, session: session, steps: scenario.steps, stepTimes: stepTimes,
                                                 failedStep: result.failedStep)
            result.virtualSeconds = session.elapsedSeconds
            if let folder = options.traceDirectory { TraceFiles.write(scenario.id, lines: lines, session: session, to: folder) }
            session.close()
        }
        loop.shutdown()
        result.wallSeconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return result
    }

    private func makeServer(_ scenario: Scenario, loop: EventLoop) throws -> ServerUnderTest {
        if let url = options.serverURL {
            let remote = try RemoteServer(loop: loop, url: url)
            if let app = scenario.app {
                let reply = try remote.control(method: "POST", path: "/control/fixtures", body: ["app": app])
                guard reply.status == 200 else { throw ScenarioError("the server refused the app settings: \(reply.body)") }
            }
            return remote
        }
        var fixtures = try FixtureSet.embedded()
        if let app = scenario.app {
            guard var merged = fixtures.settings.json.objectValue, let overrides = app.objectValue else {
                throw ScenarioError("'app' must be a mapping")
            }
            for (key, value) in overrides { merged[key] = value }
            fixtures.settings = try AppSettingsLoader.settings(from: .object(merged))
        }
        return try InProcessServer(loop: loop, fixtures: fixtures)
    }
}

/// Server app settings from a scenario's merged `app` mapping.
enum AppSettingsLoader {
    static func settings(from json: JSONValue) throws(ScenarioError) -> MockChatServer.AppSettings {
        do throws(FixtureError) {
            return try MockChatServer.AppSettings(json: json)
        } catch {
            throw ScenarioError("app settings: \(error.description)")
        }
    }
}
