import ArgumentParser
import EventLoop
import Foundation
import LoadGenerator
import MockChatCore

/// `mockchat bench`: a load generator for a running server, on its own loop and process.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load a running server and report latency, throughput, memory and presence delivery.",
        discussion: """
            Each mode prints a text report (and with --json a JSON one). Give --server-pid
            for the server's CPU time per message and its memory. docs/BENCHMARKS.md
            explains the method and the comparison script.
            """,
        subcommands: [BenchPing.self, BenchIdle.self, BenchPresence.self, BenchReconnect.self, BenchStartup.self])
}

/// Options every bench mode takes.
struct BenchCommonOptions: ParsableArguments {
    @Option(help: """
        The server on loopback: ws://HOST:PORT[/v1/ws] or HOST:PORT. Several, comma-separated, are the nodes \
        of one cluster: ping, idle and reconnect spread their connections over them (reconnect loads its users \
        on each), presence puts its subscribers on the first and its churning users on the others.
        """)
    var server = "127.0.0.1:8080"

    @Option(help: "The server's process id (comma-separated for several servers), for CPU time and memory.")
    var serverPid: String?

    @Option(help: "Comma-separated local addresses to bind connections to, e.g. 127.0.0.2,127.0.0.3.")
    var sources: String?

    @Option(help: "The app's auth key for logins.")
    var authKey = "mockchat-dev-key"

    @Option(help: "Also write the report as JSON to this file ('-' prints JSON instead of text).")
    var json: String?

    @Flag(help: "No progress line on stderr.")
    var noProgress = false

    func target() throws -> BenchTarget {
        var addresses: [SocketAddress] = []
        for text in server.split(separator: ",").map(String.init) {
            guard let address = SocketAddress(server: text) else {
                throw ValidationError("--server takes ws://HOST:PORT[/v1/ws] or HOST:PORT, got '\(text)'")
            }
            guard address.isLoopback else { throw ValidationError("the load generator only targets loopback addresses") }
            addresses.append(address)
        }
        guard !addresses.isEmpty else { throw ValidationError("--server needs at least one address") }
        var target = BenchTarget(addresses: addresses)
        for text in (serverPid ?? "").split(separator: ",") {
            guard let pid = Int32(text) else { throw ValidationError("--server-pid takes process ids, got '\(text)'") }
            target.serverPIDs.append(pid)
        }
        target.authKey = authKey
        target.showProgress = !noProgress
        if let sources {
            target.sourceHosts = sources.split(separator: ",").map { String($0) }
            guard target.sourceHosts.allSatisfy({ SocketAddress(host: $0, port: 0).isLoopback }) else {
                throw ValidationError("--sources must be loopback addresses")
            }
        }
        return target
    }

    /// Raises the open-file limit, ignores SIGPIPE, and returns a fresh loop and the target.
    func prepare() throws -> (EventLoop, BenchTarget) {
        FileDescriptorLimit.raiseToHardLimit()
        signal(SIGPIPE, SIG_IGN)
        let target = try target()
        return (try EventLoop(), target)
    }

    /// Runs `body` on a fresh loop with the limits raised, prints the report, and fails
    /// the command when the run did not complete.
    func run(_ body: (EventLoop, BenchTarget) throws -> BenchReport) throws {
        let (loop, target) = try prepare()
        let report: BenchReport
        do {
            report = try body(loop, target)
        } catch {
            loop.shutdown()
            throw error
        }
        loop.shutdown()
        if json == "-" {
            print(report.jsonText)
        } else {
            print(report.text, terminator: "")
            if let json { try (report.jsonText + "\n").write(toFile: json, atomically: true, encoding: .utf8) }
        }
        if !report.completed { throw ExitCode(1) }
    }
}

struct BenchPing: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ping",
        abstract: "Ping latency at a constant rate (open loop), or the most pings answered (closed loop, --rate 0).")

    @OptionGroup var common: BenchCommonOptions

    @Option(help: "Connections.")
    var connections = 100

    @Option(help: "Pings per second over all connections; 0 runs the closed loop.")
    var rate: Double = 10_000

    @Option(help: "Closed loop: pings in flight per connection.")
    var pipeline = 1

    @Option(help: "Measured seconds.")
    var duration: Double = 10

    @Option(help: "Seconds of load before measuring.")
    var warmup: Double = 2

    @Option(help: "The user the connections log in as (desktop devices).")
    var uid = "alice"

    func validate() throws {
        try checkFlags { () throws(BoundedNumberError) in
            _ = try BoundedNumber.check(connections, "--connections", in: 1...1_000_000, unit: "connections")
            _ = try BoundedNumber.check(rate, "--rate", in: 0...100_000_000, unit: "pings per second")
            _ = try BoundedNumber.check(pipeline, "--pipeline", in: 1...10_000, unit: "pings")
            _ = try BoundedNumber.check(duration, "--duration", in: 0.001...BoundedNumber.daySeconds, unit: "seconds")
            _ = try BoundedNumber.check(warmup, "--warmup", in: 0...BoundedNumber.daySeconds, unit: "seconds")
        }
    }

    func run() throws {
        var options = PingBench.Options()
        options.connections = connections
        options.rate = rate
        options.pipeline = max(1, pipeline)
        options.duration = duration
        options.warmup = warmup
        options.uid = uid
        try common.run { loop, target in PingBench(loop: loop, target: target, options: options).run() }
    }
}

struct BenchIdle: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "Ramp up logged-in idle connections; report the server's memory per connection and the login rate.")

    @OptionGroup var common: BenchCommonOptions

    @Option(help: "Connections in total.")
    var connections = 1_000

    @Option(help: "Generator processes to split the connections over (each may hold only its open-file limit).")
    var processes = 1

    @Option(help: "Seconds to hold the connections before reading the server's memory.")
    var hold: Double = 3

    @Option(help: "Comma-separated users the connections log in as, in turn (desktop devices).")
    var uids = "alice,bob,carol,dave,erin,frank,grace,heidi,ivan,judy,mallory,peggy,trent"

    @Option(help: "Log in as user-0 … user-N-1 in turn instead of --uids (the users of `mockchat fixtures generate --users N`).")
    var users = 0

    @Option(help: "Connections connecting at once.")
    var connectConcurrency = 256

    @Option(help: "Seconds between keep-alive pings on each held connection.")
    var keepalive: Double = 15

    @Option(help: "Number of the first connection (device ids); set by the coordinating process.")
    var firstIndex = 0

    @Flag(help: "Run as one worker of a multi-process ramp (prints one JSON line, holds until SIGTERM).")
    var worker = false

    func validate() throws {
        try checkFlags { () throws(BoundedNumberError) in
            _ = try BoundedNumber.check(connections, "--connections", in: 1...10_000_000, unit: "connections")
            _ = try BoundedNumber.check(processes, "--processes", in: 1...1_024, unit: "processes")
            _ = try BoundedNumber.check(hold, "--hold", in: 0...BoundedNumber.daySeconds, unit: "seconds")
            _ = try BoundedNumber.check(users, "--users", in: 0...10_000_000, unit: "users")
            _ = try BoundedNumber.check(connectConcurrency, "--connect-concurrency", in: 1...1_000_000, unit: "connections")
            _ = try BoundedNumber.check(keepalive, "--keepalive", in: 1...BoundedNumber.daySeconds, unit: "seconds")
            _ = try BoundedNumber.check(firstIndex, "--first-index", in: 0...10_000_000, unit: "connections")
        }
    }

    func run() throws {
        var options = IdleBench.Options()
        options.worker.connections = connections
        options.worker.uids = uids.split(separator: ",").map { String($0) }
        options.worker.users = max(0, users)
        options.worker.connectConcurrency = connectConcurrency
        options.worker.keepalive = keepalive
        options.worker.firstIndex = firstIndex
        options.processes = processes
        options.hold = hold
        if worker {
            try runWorker(options.worker)
            return
        }
        try common.run { loop, target in IdleBench(loop: loop, target: target, options: options).run() }
    }

    /// One worker process: ramp, report on stdout, hold until told to stop. When the
    /// coordinating process is gone, it closes its connections, says so on stderr and
    /// fails.
    private func runWorker(_ options: IdleWorker.Options) throws {
        let (loop, target) = try common.prepare()
        let worker = IdleWorker(loop: loop, target: target, options: options)
        var stopRequested = false
        /// Why the coordinating process is taken to be gone, once it is.
        var parentGone: String?
        func stop() {
            stopRequested = true
            loop.stop()
        }
        let signals = SignalWatcher(loop: loop, signals: [SIGTERM, SIGINT]) { _ in stop() }
        worker.start(progress: ProgressLine(enabled: false)) { outcome in
            do {
                try FileHandle.standardOutput.write(contentsOf: Data((outcome.jsonLine + "\n").utf8))
            } catch {
                // SIGPIPE is ignored (`prepare`), so a gone parent shows here as EPIPE.
                let cause = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError ?? error as NSError
                parentGone = "its report could not be written: \(cause.localizedDescription)"
                stop()
            }
        }
        // Never outlive the coordinating process, nor hold for more than ten minutes.
        let parent = getppid()
        let started = MonotonicTime.now()
        func watchParent() {
            if getppid() != parent { parentGone = "reparented to process \(getppid())" }
            if parentGone != nil || MonotonicTime.seconds(from: started, to: MonotonicTime.now()) > 600 {
                stop()
                return
            }
            loop.clock.schedule(after: 500) { watchParent() }
        }
        watchParent()
        while !stopRequested { loop.run() }
        signals.close()
        worker.closeAll()
        loop.shutdown()
        if let parentGone {
            try? FileHandle.standardError.write(contentsOf: Data("bench idle worker: the parent process is gone (\(parentGone)); exiting\n".utf8))
            throw ExitCode(1)
        }
    }
}

struct BenchPresence: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presence",
        abstract: "Presence fan-out: subscribers of all users while users go online and offline; events per second and events lost.")

    @OptionGroup var common: BenchCommonOptions

    @Option(help: "Subscriber connections (one watcher user, desktop devices).")
    var subscribers = 1_000

    @Option(help: "Users going online and offline in turn.")
    var users = 64

    @Option(help: "Transitions (online or offline) per second.")
    var churn: Double = 250

    @Option(help: "Seconds of churn.")
    var duration: Double = 10

    func validate() throws {
        try checkFlags { () throws(BoundedNumberError) in
            _ = try BoundedNumber.check(subscribers, "--subscribers", in: 0...1_000_000, unit: "connections")
            _ = try BoundedNumber.check(users, "--users", in: 1...1_000_000, unit: "users")
            _ = try BoundedNumber.check(churn, "--churn", in: 0.001...10_000_000, unit: "transitions per second")
            _ = try BoundedNumber.check(duration, "--duration", in: 0.001...BoundedNumber.daySeconds, unit: "seconds")
        }
    }

    @Flag(inversion: .prefixedNo, help: "Load the run's own users with POST /control/fixtures first (skip for servers that take any uid).")
    var loadFixtures = true

    func run() throws {
        var options = PresenceBench.Options()
        options.subscribers = subscribers
        options.users = users
        options.churn = churn
        options.duration = duration
        options.loadFixtures = loadFixtures
        try common.run { loop, target in PresenceBench(loop: loop, target: target, options: options).run() }
    }
}

struct BenchReconnect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconnect",
        abstract: "Mass reconnect: N users subscribed to all connect at once; every presence event counted, time to converge, peak RSS.")

    @OptionGroup var common: BenchCommonOptions

    @Option(help: "Users, one connection each (presence all).")
    var users = 5_000

    @Option(help: "Connections connecting at once (default: all).")
    var connectConcurrency: Int?

    @Option(help: "Seconds before the run gives up.")
    var timeout: Double = 600

    @Flag(inversion: .prefixedNo, help: "Load the run's own users with POST /control/fixtures first.")
    var loadFixtures = true

    func validate() throws {
        try checkFlags { () throws(BoundedNumberError) in
            _ = try BoundedNumber.check(users, "--users", in: 1...1_000_000, unit: "users")
            _ = try BoundedNumber.check(connectConcurrency ?? 1, "--connect-concurrency", in: 1...1_000_000, unit: "connections")
            _ = try BoundedNumber.check(timeout, "--timeout", in: 1...3600, unit: "seconds")
        }
    }

    func run() throws {
        var options = ReconnectBench.Options()
        options.users = users
        options.connectConcurrency = connectConcurrency
        options.timeout = timeout
        options.loadFixtures = loadFixtures
        try common.run { loop, target in ReconnectBench(loop: loop, target: target, options: options).run() }
    }
}

struct BenchStartup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "startup",
        abstract: "Time from exec of a server command to its first successful login.",
        discussion: "Example: mockchat bench startup -- .build/release/mockchat serve --port {port}")

    @OptionGroup var common: BenchCommonOptions

    @Option(help: "Runs.")
    var repeats = 5

    @Argument(parsing: .captureForPassthrough, help: "The server command; {port} is replaced by a free port.")
    var command: [String] = []

    func run() throws {
        // Everything after `startup` is passed through, `--help` included.
        if ["--help", "-h"].contains(command.first) { throw CleanExit.helpRequest(self) }
        var options = StartupBench.Options()
        options.command = command.first == "--" ? Array(command.dropFirst()) : command
        options.repeats = max(1, repeats)
        guard !options.command.isEmpty else { throw ValidationError("give the server command after --") }
        try common.run { loop, target in StartupBench(loop: loop, target: target, options: options).run() }
    }
}
