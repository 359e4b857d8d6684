import ChatProtocol
@testable import ConformanceHarness
import EventLoop
import ReferenceClient
import Foundation
import Testing

/// Drivers as real child processes and over a real WebSocket (docs/DRIVER.md).
@Suite struct DriverTests {
    static let badDriver = Package.path("Tests/ConformanceHarnessTests/Fixtures/drivers/bad-driver.py")

    /// Runs the init scenario and the wire-only one through `python3 bad-driver.py MODE`.
    static func run(mode: String, timeout: Double = 10) throws -> [ScenarioResult] {
        var options = CatalogueRunner.Options()
        options.jobs = 1
        options.driver = .command("python3 \(badDriver) \(mode)")
        options.driverTimeout = timeout
        let scenarios = try ["driver-init.yaml", "driver-wire-only.yaml"].map {
            try Package.load("Tests/ConformanceHarnessTests/Fixtures/\($0)")
        }
        return CatalogueRunner(options: options).run(scenarios)
    }

    @Test func wellBehavedDriverPasses() throws {
        let results = try Self.run(mode: "none")
        #expect(results.map(\.verdict) == [.passed, .passed], "\(results.map { $0.message ?? "" })")
    }

    @Test func crashingDriverFailsItsScenarioNamingDriverCommandAndStderr() throws {
        let results = try Self.run(mode: "crash")
        #expect(results.count == 2)
        #expect(results[0].verdict == .failed)
        let message = try #require(results[0].message)
        #expect(message.contains("bad-driver.py crash'"))
        #expect(message.contains("exited with status 1 during init (client a)"))
        #expect(message.contains("step 2"))
        #expect(message.contains("RuntimeError: boom: the SDK crashed in init"))
        #expect(results[1].verdict == .passed, "the run goes on: \(results[1].message ?? "")")
    }

    @Test func hangingDriverIsKilledAtItsDeadline() throws {
        let started = Date()
        let results = try Self.run(mode: "hang", timeout: 3)
        #expect(results[0].verdict == .failed)
        let message = try #require(results[0].message)
        #expect(message.contains("did not answer within 3 s during init (client a)"))
        #expect(message.contains("bad-driver: init received, mode hang"))
        #expect(results[1].verdict == .passed, "the run goes on: \(results[1].message ?? "")")
        #expect(Date().timeIntervalSince(started) < 30, "the hanging driver was not killed")
    }

    @Test func driverWritingJunkFailsItsScenario() throws {
        let results = try Self.run(mode: "junk")
        #expect(results[0].verdict == .failed)
        let message = try #require(results[0].message)
        #expect(message.contains("wrote malformed JSON: \"this is not JSON\" during init (client a)"))
        #expect(message.contains("mode junk"))
        #expect(results[1].verdict == .passed, "the run goes on: \(results[1].message ?? "")")
    }

    /// Fails before this change: reading the line took longer than the deadline, so the
    /// driver was reported as not answering.
    @Test func aDriverLineOverTheLimitIsReportedAsSuchAtOnce() throws {
        let started = Date()
        let results = try Self.run(mode: "long-line")
        #expect(results[0].verdict == .failed)
        let message = try #require(results[0].message)
        #expect(message.contains("wrote a line longer than 1048576 bytes, the limit of a driver line during init (client a)"),
                "\(message)")
        #expect(results[1].verdict == .passed, "the run goes on: \(results[1].message ?? "")")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func commandRefusedAsUnsupportedSkipsTheScenario() throws {
        let results = try Self.run(mode: "unsupported")
        #expect(results[0].verdict == .skipped)
        #expect(results[0].message == "bad-driver 0 does not support init (client a): this SDK has no manual mode (step 2)")
        #expect(results[1].verdict == .passed)
    }

    @Test func resultEventArrivingWithItsPendingReplyIsKept() throws {
        var options = CatalogueRunner.Options()
        options.driver = .command("python3 \(Self.badDriver) pending")
        let scenario = try Package.load("Tests/ConformanceHarnessTests/Fixtures/driver-pending.yaml")
        let result = CatalogueRunner(options: options).run([scenario])[0]
        #expect(result.verdict == .passed, "\(result.message ?? "")")
    }

    @Test func commandThatCannotStartFailsEveryScenarioClearly() throws {
        var options = CatalogueRunner.Options()
        options.driver = .command("exec /nonexistent/driver")
        options.driverTimeout = 5
        let scenario = try Package.load("Tests/ConformanceHarnessTests/Fixtures/driver-init.yaml")
        let result = CatalogueRunner(options: options).run([scenario])[0]
        #expect(result.verdict == .failed)
        #expect(result.message?.contains("driver 'exec /nonexistent/driver' exited with status 127 during hello") == true,
                "\(result.message ?? "")")
        #expect(result.message?.contains("/nonexistent/driver") == true)
    }

    /// One fixture scenario through the well-behaved `bad-driver.py none`.
    static func runThroughPlainDriver(_ fixture: String) throws -> ScenarioResult {
        var options = CatalogueRunner.Options()
        options.driver = .command("python3 \(Self.badDriver) none")
        let scenario = try Package.load("Tests/ConformanceHarnessTests/Fixtures/\(fixture)")
        return CatalogueRunner(options: options).run([scenario])[0]
    }

    @Test func unsupportedStepIsSkippedWithItsReason() throws {
        let result = try Self.runThroughPlainDriver("driver-needs-ping.yaml")
        #expect(result.verdict == .skipped)
        #expect(result.message == "bad-driver 0: the driver does not support 'ping' (step 3)")
    }

    @Test func listenerChecksAreSkippedWithoutConnectionListenerEvents() throws {
        let result = try Self.runThroughPlainDriver("driver-needs-listener-calls.yaml")
        #expect(result.verdict == .skipped)
        #expect(result.message?.contains("does not report 'connectionListener' events, needed by a.connectionListeners") == true,
                "\(result.message ?? "")")
    }

    /// Found by `mockchat fuzz --mode inputs` (seed 20261126, input 1370): a `start` with
    /// port 65536 crashed `mockchat driver` when a client connected (a 16-bit conversion).
    @Test func referenceDriverRefusesNumbersOutOfRangeInsteadOfCrashing() throws {
        let server: JSONValue = ["host": "127.0.0.1", "port": 9]
        let messages: [JSONValue] = [
            ["type": "start", "id": 1, "server": ["host": "127.0.0.1", "port": 65536]],
            ["type": "start", "id": 2, "server": server, "clock": ["mode": "virtual", "now": .integer(.max)]],
            ["type": "start", "id": 3, "server": server],
            ["type": "advance", "id": 4, "to": .integer(.max)],
            ["type": "advance", "id": 5, "to": 1_700_000_001_000],
        ]
        let replies = try Self.serveReferenceDriver(messages).replies
        #expect(replies.map { $0["error"]?["code"]?.stringValue } == ["bad-arguments", "bad-arguments", nil, "bad-arguments", nil])
        #expect(replies.first?["error"]?["message"]?.stringValue == "server.port must be an integer from 0 to 65535, not 65536")
    }

    /// Feeds `messages` to the reference driver until its input ends; what it wrote, and its replies.
    static func serveReferenceDriver(_ messages: [JSONValue]) throws -> (written: [JSONValue], replies: [JSONValue]) {
        let inbox = DriverInbox()
        for message in messages { inbox.push(.message(Array(message.serialized().utf8))) }
        inbox.push(.closed("done"))
        let written = Written()
        let driver = try ReferenceDriver(inbox: inbox, profilesFolder: Package.path("Fixtures/profiles")) { written.add($0) }
        driver.serve()
        return (written.all, written.all.filter { $0["type"]?.stringValue == "reply" })
    }

    @Test func referenceDriverAnswersUnknownCommandsWithADefinedError() throws {
        let messages: [JSONValue] = [
            ["type": "teleport", "id": 1],
            ["type": "command", "id": 2, "client": "a", "command": "teleport", "args": [:]],
            ["type": "command", "id": 3, "client": "a", "command": "create", "args": ["profile": "cometchat-ios"]],
            ["type": "command", "id": 4, "client": "a", "command": "teleport", "args": [:]],
            ["type": "command", "id": 5, "client": "a", "command": "getUser", "args": [:]],
        ]
        let (written, replies) = try Self.serveReferenceDriver(messages)
        #expect(written.first?["type"]?.stringValue == "hello")
        #expect(replies.map { $0["error"]?["code"]?.stringValue } ==
                ["unknown-command", "unknown-client", nil, "unknown-command", "bad-arguments"])
    }

    /// Device events check every key of their `args` (docs/DRIVER.md, "Device events").
    @Test func deviceEventsWithBadArgumentsAreRefusedByName() throws {
        func refusal(_ name: String, _ args: JSONValue) -> String? {
            guard case .failure(.badArguments(let message)) = DriverCodec.decode(name, args) else { return nil }
            return message
        }
        #expect(refusal("dns", ["fail": 3]) == nil)
        #expect(refusal("dns", ["fail": true]) == nil)
        #expect(refusal("dns", [:]) == "dns needs 'fail': an integer from 0 to 1000000")
        #expect(refusal("dns", ["fail": -1]) == "dns needs 'fail': an integer from 0 to 1000000")
        #expect(refusal("dns", ["fail": 1, "host": "x"]) == "dns takes no 'host', only 'fail' and 'error'")
        #expect(refusal("dns", ["fail": 1, "error": "temporary"]) == nil)
        #expect(refusal("dns", ["fail": 1, "error": "EAI_AGAIN"]) == "dns needs 'error': one of notFound, temporary")
        #expect(refusal("dns", ["fail": 1, "error": 3]) == "dns needs 'error': one of notFound, temporary")
        #expect(refusal("sleep", ["ms": 0]) == "sleep needs 'ms': an integer from 1 to 86400000")
        #expect(refusal("sleep", ["ms": "90s"]) == "sleep needs 'ms': an integer from 1 to 86400000")
        #expect(refusal("throttle", ["periodMs": 3_600_001]) == "throttle needs 'periodMs': an integer from 0 to 3600000")
        #expect(refusal("networkChange", ["to": "cellular"]) == "networkChange takes no 'to'")
        #expect(refusal("networkChange", .string("x")) == "networkChange needs an object of args")
        for command: SDKCommand in [.device(.dnsFailure(attempts: nil)), .device(.dnsFailure(attempts: 0)), .device(.dnsFailure(attempts: 4)),
                                    .device(.dnsFailure(attempts: 2, kind: .temporary)), .device(.dnsFailure(attempts: nil, kind: .temporary)),
                                    .device(.sleep(milliseconds: 25_000)), .device(.throttle(periodMilliseconds: 60_000)),
                                    .device(.networkChange)] {
            let (name, args) = DriverCodec.encode(command)
            #expect(try DriverCodec.decode(name, args).get() == command, "\(name) round trip")
        }
    }

    /// The whole catalogue through the reference driver over the WebSocket transport
    /// gives the same verdict as the in-process run, scenario by scenario.
    @Test func catalogueThroughDriverGivesTheInProcessVerdicts() throws {
        // With a scenario whose expectation is wrong: assertions answered from what the
        // driver reported must fail too.
        let catalogue = try ScenarioLoader.loadAll(paths: [Package.path("Fixtures/scenarios")])
            + [Package.load("Tests/ConformanceHarnessTests/Fixtures/wrong-expectation.yaml")]
        var local = CatalogueRunner.Options()
        local.expectedFailures = []
        let listener = try DriverListener(address: SocketAddress(host: "127.0.0.1", port: 0))
        let profiles = Package.path("Fixtures/profiles")
        startReferenceDriver(dialling: listener.address, seed: 3)
        var remote = CatalogueRunner.Options()
        remote.driver = .listener(listener)
        let runner = { (options: CatalogueRunner.Options) in
            var runner = ScenarioRunner(options: options)
            runner.profilesFolder = profiles
            return catalogue.map { runner.run($0) }
        }
        let inProcess = runner(local)
        let driven = runner(remote)
        #expect(inProcess.count == driven.count)
        for (a, b) in zip(inProcess, driven) {
            #expect(a.verdict == b.verdict, "\(a.id): in-process \(a.verdict), through the driver \(b.verdict): \(b.message ?? "")")
        }
        let notPassed = driven.dropLast().filter { $0.verdict != .passed }.map(\.id)
        #expect(notPassed.isEmpty, "not passed through the driver: \(notPassed)")
        let wrong = try #require(driven.last)
        #expect(wrong.verdict == .failed)
        #expect(wrong.message?.contains("actual:   \"connected\"") == true, "\(wrong.message ?? "")")
    }

    /// Real time: `advance: 1s` waits a second, and `at: 1` holds within the tolerance.
    /// The tolerance is half a second, not the default 0.1 s: tests run in parallel on as
    /// few as two cores, and a loaded core once held the event past 0.1 s.
    @Test func wallClockRunWaitsRealTime() throws {
        var options = CatalogueRunner.Options()
        options.wallClock = true
        options.tolerance = 0.5
        var runner = ScenarioRunner(options: options)
        runner.profilesFolder = Package.path("Fixtures/profiles")
        let started = Date()
        let result = runner.run(try Package.load("Fixtures/scenarios/connection/manual-connect-starts-events.yaml"))
        #expect(result.verdict == .passed, "\(result.message ?? "")")
        #expect(Date().timeIntervalSince(started) >= 1)
    }

    @Test func wallClockSkipsScenariosWaitingLongerThanMaxWait() throws {
        var options = CatalogueRunner.Options()
        options.wallClock = true
        options.maxWait = 5
        let result = ScenarioRunner(options: options).run(try Package.load("Fixtures/scenarios/background/manual-dropped-at-30s.yaml"))
        #expect(result.verdict == .skipped)
        #expect(result.message == "needs 630.0 s of real time in wall-clock mode (more than --max-wait)")
    }

    @Test func balancedNeedsEverySocketOpenAndBothCountsEqual() {
        let open = SocketCount(port: 5000, isOpen: true, sent: 2, received: 3)
        let server = SocketCount(port: 5000, isOpen: true, sent: 3, received: 2)
        #expect(Timeline.balanced([open], [server]))
        #expect(!Timeline.balanced([open], [SocketCount(port: 5000, isOpen: true, sent: 2, received: 2)]))
        #expect(!Timeline.balanced([open], []))
        #expect(!Timeline.balanced([], [server]))
        #expect(!Timeline.balanced([open, SocketCount(port: 0, isOpen: false, sent: 0, received: 0)], [server]))
        // A silent session the client dropped (the server cannot know) is not waited for;
        // one the client still holds is compared as usual.
        let silent = SocketCount(port: 6000, isOpen: true, sent: 1, received: 2, silent: true)
        #expect(Timeline.balanced([open], [server, silent]))
        #expect(!Timeline.balanced([open], [server, SocketCount(port: 6000, isOpen: true, sent: 1, received: 2)]))
        #expect(!Timeline.balanced([open, SocketCount(port: 6000, isOpen: true, sent: 3, received: 1)], [server, silent]))
    }

    @Test func anUpgradeTheServerHoldsIsSettledOnlyForItsOwnClientSocket() {
        let open = SocketCount(port: 5000, isOpen: true, sent: 2, received: 3)
        let server = SocketCount(port: 5000, isOpen: true, sent: 3, received: 2)
        let opening = SocketCount(port: 7000, isOpen: false, sent: 0, received: 0)
        let held = SocketCount(port: 7000, isOpen: false, sent: 0, received: 0, held: true)
        #expect(Timeline.balanced([open, opening], [server, held]))
        // Not yet read by the server: the upgrade is still on its way.
        #expect(!Timeline.balanced([open, opening], [server]))
        // Another socket's upgrade held does not settle this one; one its client gave up is ignored.
        #expect(!Timeline.balanced([open, opening], [server, SocketCount(port: 7001, isOpen: false, sent: 0, received: 0, held: true)]))
        #expect(Timeline.balanced([open], [server, held]))
        // A client that does not know its port yet is still connecting.
        #expect(!Timeline.balanced([open, SocketCount(port: 0, isOpen: false, sent: 0, received: 0)], [server, held]))
    }

    /// A driver that cannot tell its sockets' ports (a page) is matched by totals: as many
    /// open sockets as sessions, equal sums both ways, and its unanswered upgrades held.
    @Test func withoutPortsTheSocketsAreMatchedByTotals() {
        let page = [SocketCount(port: 0, isOpen: true, sent: 2, received: 3), SocketCount(port: 0, isOpen: true, sent: 1, received: 1)]
        let sessions = [SocketCount(port: 5000, isOpen: true, sent: 1, received: 1), SocketCount(port: 5001, isOpen: true, sent: 3, received: 2)]
        let held = SocketCount(port: 7000, isOpen: false, sent: 0, received: 0, held: true)
        #expect(Timeline.balanced([], portless: page, unanswered: 0, sessions))
        #expect(Timeline.balanced([], portless: page, unanswered: 1, sessions + [held]))
        #expect(Timeline.balanced([], portless: [], unanswered: 0, []))
        // A frame on its way either way, a session the page has let go, one not yet opened.
        #expect(!Timeline.balanced([], portless: page, unanswered: 0, [sessions[0], SocketCount(port: 5001, isOpen: true, sent: 3, received: 1)]))
        #expect(!Timeline.balanced([], portless: page, unanswered: 0, [sessions[0], SocketCount(port: 5001, isOpen: true, sent: 4, received: 2)]))
        #expect(!Timeline.balanced([], portless: [page[0]], unanswered: 0, sessions))
        #expect(!Timeline.balanced([], portless: page, unanswered: 1, sessions))
        // An abandoned attempt the browser has not closed, and the next one behind it.
        #expect(!Timeline.balanced([], portless: page, unanswered: 2, sessions + [held]))
        // Silence and latency cannot be told apart by totals.
        #expect(!Timeline.balanced([], portless: page, unanswered: 0, [sessions[0], SocketCount(port: 5001, isOpen: true, sent: 3, received: 2, silent: true)]))
        #expect(!Timeline.balanced([], portless: page, unanswered: 0, [sessions[0], SocketCount(port: 5001, isOpen: true, sent: 3, received: 2, receiving: true)]))
        // The harness's own wire clients are matched by port beside them.
        let wire = SocketCount(port: 6000, isOpen: true, sent: 1, received: 2)
        #expect(Timeline.balanced([wire], portless: page, unanswered: 0, sessions + [SocketCount(port: 6000, isOpen: true, sent: 2, received: 1)]))
        #expect(!Timeline.balanced([wire], portless: page, unanswered: 0, sessions + [SocketCount(port: 6000, isOpen: true, sent: 1, received: 1)]))
    }

    /// The fallback: 20 ms of the same server counts, with the page's unanswered upgrades held.
    @Test func withoutPortsAQuietServerSettlesOnceItHoldsTheUnansweredUpgrades() {
        let session = SocketCount(port: 5000, isOpen: true, sent: 3, received: 2)
        let held = SocketCount(port: 7000, isOpen: false, sent: 0, received: 0, held: true)
        #expect(Timeline.quiet([session], for: 0.02, unanswered: 0))
        #expect(!Timeline.quiet([session], for: 0.019, unanswered: 0))
        #expect(Timeline.quiet([session, held], for: 0.05, unanswered: 1))
        #expect(!Timeline.quiet([session], for: 0.05, unanswered: 1))
        #expect(!Timeline.quiet([session, held], for: 0.05, unanswered: 2))
    }
}

/// Messages a driver wrote, collected across threads.
final class Written: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [JSONValue] = []
    func add(_ message: JSONValue) { lock.withLock { messages.append(message) } }
    var all: [JSONValue] { lock.withLock { messages } }
}
