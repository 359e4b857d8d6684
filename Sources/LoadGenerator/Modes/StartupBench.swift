import ChatProtocol
import EventLoop
import Foundation
import MockChatCore

/// `mockchat bench startup`: time from exec to the first successful login.
///
/// Starts the server command (`{port}` in it is replaced by a free port), then
/// connects every millisecond until a WebSocket upgrade and a login succeed. The
/// clock starts just before the process is spawned, so the figure includes exec,
/// dynamic loading, fixture parsing and binding. The server is then stopped with
/// SIGTERM (SIGKILL after 5 s). Repeated `repeats` times.
public final class StartupBench {
    public struct Options: Sendable {
        public var command: [String] = []
        public var repeats = 5
        public var uid = "alice"
        /// Give up on one start after this many seconds.
        public var timeout: Double = 10
        public init() {}
    }

    private let loop: EventLoop
    private let target: BenchTarget
    private let options: Options
    private let progress: ProgressLine

    public init(loop: EventLoop, target: BenchTarget, options: Options) {
        self.loop = loop
        self.target = target
        self.options = options
        progress = ProgressLine(enabled: target.showProgress)
    }

    public func run() -> BenchReport {
        var samples: [Double] = []
        var notes: [String] = []
        for attempt in 0..<max(1, options.repeats) {
            progress.update("startup: run \(attempt + 1) of \(options.repeats)")
            switch measureOnce() {
            case .success(let milliseconds): samples.append(milliseconds)
            case .failure(let problem): notes.append("run \(attempt + 1): \(problem.reason)")
            }
        }
        progress.clear()
        let settings = BenchReport.Section("settings", "Settings", [
            .init("command", .string(options.command.joined(separator: " ")), "command"),
            .init("repeats", .integer(Int64(options.repeats)), "runs"),
        ])
        let results = BenchReport.Section("results", "Results", [
            .init("samples", .integer(Int64(samples.count)), "successful runs"),
            .init("readyMillisMin", .figure(samples.min(), places: 2), "exec to first login, min", unit: "ms"),
            .init("readyMillisMedian", .figure(BenchMath.median(samples), places: 2), "exec to first login, median", unit: "ms"),
            .init("readyMillisMax", .figure(samples.max(), places: 2), "exec to first login, max", unit: "ms"),
            .init("readyMillis", .array(samples.map { .figure($0, places: 2) }), "all runs", unit: "ms"),
        ])
        return BenchReport(mode: "startup", sections: [settings, results], notes: notes, completed: !samples.isEmpty)
    }

    struct Problem: Error { var reason: String }

    private func measureOnce() -> Result<Double, Problem> {
        guard let port = Self.freePort(host: target.address.host) else { return .failure(Problem(reason: "no free port")) }
        let arguments = options.command.map { $0.replacingOccurrences(of: "{port}", with: String(port)) }
        guard let executable = arguments.first else { return .failure(Problem(reason: "no command given")) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let address = SocketAddress(host: target.address.host, port: port)
        let started = MonotonicTime.now()
        do {
            try process.run()
        } catch {
            return .failure(Problem(reason: "cannot start \(executable): \(error)"))
        }
        defer { Self.stop(process) }
        var readyAt: UInt64?
        var attempt = 0
        let deadline = started + UInt64(options.timeout * 1e9)
        func tryLogin() {
            guard readyAt == nil, MonotonicTime.now() < deadline, process.isRunning else { return }
            attempt += 1
            let socket = BenchSocket(index: attempt, seed: UInt64(attempt))
            socket.open(on: loop, to: address) { [options, target] result in
                guard case .success = result else {
                    self.loop.clock.schedule(after: 1) { tryLogin() }
                    return
                }
                socket.onText = { payload in
                    if case .reply(id: 1, ok: true) = ServerFrameKind(payload) { readyAt = MonotonicTime.now() }
                    socket.close()
                }
                socket.onClosed = { if readyAt == nil { self.loop.clock.schedule(after: 1) { tryLogin() } } }
                socket.sendText(LoginFrame.bytes(uid: options.uid, authKey: target.authKey, deviceId: "bench-startup",
                                                 presence: .none))
            }
        }
        tryLogin()
        loop.run(timeout: options.timeout + 1) { readyAt != nil || MonotonicTime.now() >= deadline || !process.isRunning }
        guard let readyAt else {
            return .failure(Problem(reason: process.isRunning ? "no login within \(options.timeout) s" : "the server exited"))
        }
        // Let the last socket's close finish before the next run.
        loop.run(timeout: 0.2) { false }
        return .success(Double(readyAt - started) / 1e6)
    }

    private static func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// A port nothing listens on right now.
    static func freePort(host: String) -> Int? {
        let fd = HostSystem.streamSocket(family: AF_INET)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { return nil }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return nil }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
