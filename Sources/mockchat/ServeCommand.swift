import ArgumentParser
import EventLoop
import Foundation
import Logging
import MockChatCore
import MockChatServer
import TraceReplay

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `mockchat serve`: runs the server until SIGINT or SIGTERM.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the mock chat server.",
        discussion: """
            Clients log in over WebSocket at ws://HOST:PORT/v1/ws. The control API (reset,
            fixtures, clock, faults, connections, trace) is plain HTTP under
            http://HOST:PORT/control/. It answers loopback clients that name a loopback
            Host, carry no foreign Origin and send JSON bodies as application/json; with
            --control-token every request needs 'Authorization: Bearer TOKEN'. SIGINT or
            SIGTERM closes every WebSocket with code 1001 and exits 0.
            """)

    /// The signals that stop the server.
    static let stopSignals = [SIGINT, SIGTERM]

    enum ClockChoice: String, ExpressibleByArgument, CaseIterable {
        case system, virtual
    }

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on, 0 to 65535 (0 picks a free one).")
    var port = 8080

    @Option(help: "Folder with users.json and app.json (default: the fixtures built into the binary).")
    var fixtures: String?

    @Option(help: "system: real time. virtual: time stands still until POST /control/clock/advance.")
    var clock: ClockChoice = .system

    @Option(help: "Also write the trace of every frame, open and close to this file as JSON lines.")
    var trace: String?

    @Option(help: "Record the session to replay it: the trace file with every frame whole (see `mockchat scenarios from-trace`).")
    var record: String?

    @Option(help: "Trace entries kept in memory for GET /control/trace; 0 keeps none (for benchmarks: the trace costs time on every frame).")
    var traceCapacity = 200_000

    @Option(help: "Trace memory for GET /control/trace, in MiB; the oldest entries go first beyond it.")
    var traceMemory = 64

    @Flag(help: "Keep authKey and token values in the trace and control replies (redacted by default).")
    var traceSecrets = false

    @Option(help: "Log level: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")). Debug logs logins, kicks, closes and faults.")
    var logLevel: Logger.Level = .info

    @Option(help: "Sessions from one address that may be waiting to log in at once; more get 503.")
    var maxPendingLogins = 4_096

    @Option(help: "Require 'Authorization: Bearer TOKEN' on every control request (default: $MOCKCHAT_CONTROL_TOKEN, so the token stays out of process listings).")
    var controlToken: String?

    /// `--control-token`, else a non-empty $MOCKCHAT_CONTROL_TOKEN (read here, not as the
    /// option's default, so `--help` never prints it).
    private var token: String? {
        controlToken ?? ProcessInfo.processInfo.environment["MOCKCHAT_CONTROL_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }

    @Option(help: "A further Host name the control API accepts (repeatable); loopback names always work.")
    var controlHost: [String] = []

    @Flag(help: "Let the control API answer clients that are not on loopback (needs --control-token).")
    var controlFromAnywhere = false

    @Flag(help: "Do not serve the web console at /console (docs/CONSOLE.md).")
    var noConsole = false

    @Option(help: "Share presence and devices with other nodes through Redis at redis://HOST:PORT (docs/CLUSTER.md).")
    var cluster: String?

    @Option(help: "This node's name in the cluster: unique, 1 to 64 letters, digits, '.', '_' or '-'. Required with --cluster.")
    var node: String?

    @Option(help: "Cluster: a killed node's users go offline on the other nodes within this many milliseconds.")
    var nodeTtl: Int64 = 3000

    /// The largest --trace-memory, in MiB: 1 TiB.
    static let maxTraceMemory = 1 << 20

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535, not \(port)") }
        if trace != nil && record != nil {
            throw ValidationError("give --trace FILE or --record FILE, not both: a recording is the trace with every frame whole")
        }
        do throws(BoundedNumberError) {
            _ = try BoundedNumber.check(traceCapacity, "--trace-capacity", in: 0...100_000_000, unit: "entries")
            _ = try BoundedNumber.check(maxPendingLogins, "--max-pending-logins", in: 1...1_000_000, unit: "sessions")
            // Converted to bytes with `<< 20`: the bound keeps the shift inside Int.
            _ = try BoundedNumber.check(traceMemory, "--trace-memory", in: 0...Self.maxTraceMemory, unit: "MiB")
            _ = try BoundedNumber.check(nodeTtl, "--node-ttl", in: 30...86_400_000, unit: "milliseconds")
        } catch {
            throw ValidationError(error.description)
        }
        if controlFromAnywhere && (token ?? "").isEmpty {
            throw ValidationError("--control-from-anywhere needs --control-token: the control API can drop every user")
        }
        if let controlToken, controlToken.isEmpty { throw ValidationError("--control-token must not be empty") }
        guard cluster != nil else {
            if node != nil { throw ValidationError("--node needs --cluster redis://HOST:PORT") }
            return
        }
        guard let cluster, let node else { throw ValidationError("--cluster needs --node NAME, unique among the nodes") }
        do throws(ClusterConfigurationError) {
            _ = try ClusterBridge.Configuration(url: cluster, node: node)
        } catch {
            throw ValidationError(error.description)
        }
        guard clock == .system else {
            throw ValidationError("--clock virtual cannot be used with --cluster: the virtual clock is one process's; nodes share real time")
        }
    }

    func run() throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "mockchat")
        // Every connection is a file descriptor: the hard limit is the real ceiling.
        let descriptors = FileDescriptorLimit.raiseToHardLimit()
        // A peer that vanishes mid-write must cost an EPIPE, not the process.
        signal(SIGPIPE, SIG_IGN)
        let fixtureSet = try fixtures.map { try FixtureSet.load(folder: $0) } ?? FixtureSet.embedded()
        // Opened before the loop exists, so a bad path ends the command cleanly.
        let traceLog: TraceLog
        do {
            traceLog = try TraceLog(capacity: traceCapacity, byteLimit: traceMemory << 20, path: trace ?? record,
                                    redactsSecrets: !traceSecrets, wholeFrames: record != nil)
        } catch {
            FileHandle.standardError.write(Data("mockchat serve: \(error)\n".utf8))
            throw ExitCode(2)
        }
        var configuration = ChatServer.Configuration()
        configuration.address = SocketAddress(host: host, port: port)
        if let cluster, let node {
            // Checked in validate(), before the loop exists.
            configuration.cluster = try ClusterBridge.Configuration(url: cluster, node: node)
            configuration.cluster?.nodeTTLMilliseconds = nodeTtl
        }
        // Upgrades stop before the descriptors run out: the rest stays for the control
        // API, the listener, the trace file and the loop's own handles.
        configuration.web.maxConnections = min(configuration.web.maxConnections,
                                               max(16, descriptors - configuration.web.reservedConnections - 64))
        configuration.maxPendingLoginsPerAddress = maxPendingLogins
        configuration.controlAccess = ControlAccess(token: token, fromAnywhere: controlFromAnywhere,
                                                    allowedHosts: controlHost.map { $0.lowercased() })
        configuration.console = !noConsole
        let loop = try EventLoop(clockMode: clock == .virtual ? .virtual(start: .virtualEpoch) : .system)
        let server: ChatServer
        do {
            server = try ChatServer(loop: loop, configuration: configuration, directory: fixtureSet.directory,
                                    settings: fixtureSet.settings, trace: traceLog)
        } catch {
            // A loop must be shut down before it goes; a failed start ends with the reason, not a trap.
            _ = loop.shutdown()
            FileHandle.standardError.write(Data("mockchat serve: cannot listen on \(host):\(port): \(error)\n".utf8))
            throw ExitCode(1)
        }
        server.setScenarioMaker { Self.scenario(fromTrace: $0, name: $1) }
        let signals = SignalWatcher(loop: loop, signals: Self.stopSignals) { signal in
            logger.notice("signal \(signal): closing \(server.sessionCount) sessions with 1001")
            server.shutdown()
            loop.stop()
        }
        let url = "ws://\(server.address)/v1/ws"
        let banner = """
            MockChat listening on \(url) (\(fixtureSet.directory.records.count) users, \(clock.rawValue) clock\(node.map { ", cluster node \($0)" } ?? ""))
            Try: {"id":1,"op":"login","uid":"alice","authKey":"\(fixtureSet.settings.authKey)","deviceId":"phone-1","platform":"mobile"}
            Control API: http://\(server.address)/control/health   Stop: Ctrl-C
            \(noConsole ? "" : "Console: http://\(server.address)/console\(controlToken == nil ? "" : "?token=<the --control-token>")\n")

            """
        FileHandle.standardOutput.write(Data(banner.utf8))
        loop.run()
        signals.close()
        loop.run(timeout: 1) { server.openConnectionCount == 0 && !server.isClusterLinkOpen }
        // hiredis's libuv handles must be closing before the loop shuts down.
        server.closeClusterLink()
        let status = loop.shutdown()
        guard status == 0 else {
            logger.error("the event loop did not close cleanly (uv_loop_close returned \(status))")
            throw ExitCode(1)
        }
    }

    /// "Save as scenario" in the console: the session's trace through `scenarios from-trace`.
    static func scenario(fromTrace text: String, name: String) -> Result<ConsoleScenario, ScenarioMakingError> {
        do {
            let trace = try TraceFile.parse(text, path: name + ".jsonl")
            let made = try ScenarioFromTrace.make(trace, id: "regressions/console-\(name)", title: "Console session \(name)",
                                                  source: "saved from the console of `mockchat serve`",
                                                  made: "the console of mockchat serve, saved as")
            return .success(ConsoleScenario(yaml: made.yaml, steps: made.steps))
        } catch {
            return .failure(ScenarioMakingError(error.description))
        }
    }
}
