import ArgumentParser
import EventLoop
import Foundation
import Logging
import MockChatServer

/// `mockchat serve`: runs the server until SIGINT or SIGTERM.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the mock chat server.",
        discussion: """
            Clients log in over WebSocket at ws://HOST:PORT/v1/ws. The control API (reset,
            fixtures, clock, faults, connections, trace) is plain HTTP under
            http://HOST:PORT/control/ and answers loopback clients only. SIGINT or SIGTERM
            closes every WebSocket with code 1001 and exits 0.
            """)

    enum ClockChoice: String, ExpressibleByArgument, CaseIterable {
        case system, virtual
    }

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8080

    @Option(help: "Folder with users.json and app.json (default: the fixtures built into the binary).")
    var fixtures: String?

    @Option(help: "system: real time. virtual: time stands still until POST /control/clock/advance.")
    var clock: ClockChoice = .system

    @Option(help: "Also write the trace of every frame, open and close to this file as JSON lines.")
    var trace: String?

    @Option(help: "Trace entries kept in memory for GET /control/trace; 0 keeps none (for benchmarks: the trace costs time on every frame).")
    var traceCapacity = 200_000

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Flag(help: "Let the control API answer clients that are not on loopback.")
    var controlFromAnywhere = false

    @Option(help: "Share presence and devices with other nodes through Redis at redis://HOST:PORT (docs/CLUSTER.md).")
    var cluster: String?

    @Option(help: "This node's name in the cluster (unique; no '/'). Required with --cluster.")
    var node: String?

    @Option(help: "Cluster: a killed node's users go offline on the other nodes within this many milliseconds.")
    var nodeTtl: Int64 = 3000

    func validate() throws {
        guard cluster != nil else {
            if node != nil { throw ValidationError("--node needs --cluster redis://HOST:PORT") }
            return
        }
        guard node != nil else { throw ValidationError("--cluster needs --node NAME, unique among the nodes") }
        guard clock == .system else {
            throw ValidationError("--clock virtual cannot be used with --cluster: the virtual clock is one process's; nodes share real time")
        }
        guard nodeTtl >= 30 else { throw ValidationError("--node-ttl \(nodeTtl): must be at least 30 milliseconds") }
    }

    func run() throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "mockchat")
        // Every connection is a file descriptor: the hard limit is the real ceiling.
        FileDescriptorLimit.raiseToHardLimit()
        // A peer that vanishes mid-write must cost an EPIPE, not the process.
        signal(SIGPIPE, SIG_IGN)
        let fixtureSet = try fixtures.map { try FixtureSet.load(folder: $0) } ?? FixtureSet.embedded()
        let loop = try EventLoop(clockMode: clock == .virtual ? .virtual(start: .virtualEpoch) : .system)
        var configuration = ChatServer.Configuration()
        configuration.address = SocketAddress(host: host, port: port)
        configuration.controlFromAnywhere = controlFromAnywhere
        if let cluster, let node {
            do {
                configuration.cluster = try ClusterBridge.Configuration(url: cluster, node: node)
            } catch {
                throw ValidationError("--cluster/--node: \(error)")
            }
            configuration.cluster?.nodeTTLMilliseconds = nodeTtl
        }
        let server = try ChatServer(loop: loop, configuration: configuration, directory: fixtureSet.directory,
                                    settings: fixtureSet.settings,
                                    trace: TraceLog(capacity: traceCapacity, path: trace))
        let signals = SignalWatcher(loop: loop, signals: [SIGINT, SIGTERM]) { signal in
            logger.notice("signal \(signal): closing \(server.sessionCount) sessions with 1001")
            server.shutdown()
            loop.stop()
        }
        let url = "ws://\(server.address)/v1/ws"
        let banner = """
            MockChat listening on \(url) (\(fixtureSet.directory.records.count) users, \(clock.rawValue) clock\(node.map { ", cluster node \($0)" } ?? ""))
            Try: {"id":1,"op":"login","uid":"alice","authKey":"\(fixtureSet.settings.authKey)","deviceId":"phone-1","platform":"mobile"}
            Control API: http://\(server.address)/control/health   Stop: Ctrl-C

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
}
