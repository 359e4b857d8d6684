import ChatProtocol
import EventLoop
import WireKit

/// `mockchat bench reconnect`: a mass reconnect, everyone subscribed to everyone.
///
/// `users` distinct users (loaded first through `POST /control/fixtures`, as
/// `bench-r0`…) connect at once and log in with presence for all users, as clients do
/// after an outage. The k-th login the server accepts owes one `user.online` to each of
/// the k − 1 connections logged in before it, so the storm is n(n − 1)/2 events for n
/// logins. Every event is counted per connection; the run converges when every
/// connection has logged in and the counts, sorted, are exactly 0, 1, …, n − 1.
///
/// Reports the time to converge, events per second, the server's peak RSS (sampled
/// every 100 ms), its CPU per event, and its write system calls, from which frames and
/// bytes per write follow. Given a cluster's nodes, the users are loaded on every node
/// first, connection i goes to node i mod n, and the server figures are the nodes'
/// sums (with the largest node's peak RSS beside the sum's).
public final class ReconnectBench {
    public struct Options: Sendable {
        public var users = 5_000
        /// Connections connecting at once (by default all of them).
        public var connectConcurrency: Int?
        /// Upper bound on the whole storm, in seconds.
        public var timeout: Double = 600
        public var loadFixtures = true
        public init() {}
    }

    static let userPrefix = "bench-r"

    private let loop: EventLoop
    private let target: BenchTarget
    private let options: Options
    private let progress: ProgressLine
    private var ramp: LoginRamp!
    private var counts: [Int] = []
    private var received = 0
    private var otherFrames = 0
    private var closes = 0
    private var startedAt: UInt64 = 0
    private var convergedAt: UInt64?
    private var lastEventAt: UInt64 = 0
    private var peakRSS = PeakMemory()
    private var startSample: WindowSample?
    private var endSample: WindowSample?
    private var writesBefore: WriteCounts?
    private var writesAfter: WriteCounts?
    private var setupProblem: String?
    private var finished = false
    private var lastProgress: UInt64 = 0

    public init(loop: EventLoop, target: BenchTarget, options: Options) {
        self.loop = loop
        self.target = target
        self.options = options
        progress = ProgressLine(enabled: target.showProgress)
    }

    /// Runs the benchmark on the loop and returns its report.
    public func run() -> BenchReport {
        if options.loadFixtures {
            progress.update("reconnect: loading \(options.users) users")
            loadFixtures()
        } else {
            storm()
        }
        loop.run()
        progress.clear()
        let report = makeReport()
        if let ramp {
            for socket in ramp.sockets { socket.close() }
            loop.run(timeout: 20) { ramp.sockets.allSatisfy { $0.state != .open && $0.state != .upgrading && $0.state != .connecting } }
        }
        return report
    }

    private func loadFixtures() {
        let uids = (0..<options.users).map { Self.userPrefix + String($0) }
        ControlRequest.loadUsers(uids, on: loop, to: target.addresses) { [unowned self] problem in
            guard let problem else { return storm() }
            setupProblem = problem
            finish()
        }
    }

    private func storm() {
        counts = Array(repeating: 0, count: options.users)
        ramp = LoginRamp(loop: loop, target: target, count: options.users,
                         concurrency: options.connectConcurrency ?? options.users, seed: 0x5245_434F) { [target] index in
            LoginFrame.bytes(uid: Self.userPrefix + String(index), authKey: target.authKey,
                             deviceId: "bench-reconnect-\(index)", presence: .allUsers)
        }
        ramp.onOtherText = { [unowned self] socket, payload in
            if case .presence(online: true, _) = ServerFrameKind(payload) {
                counts[socket.index] += 1
                received += 1
                lastEventAt = MonotonicTime.now()
            } else {
                otherFrames += 1
            }
        }
        writesBefore = target.servers.total { $0.writes() }
        startSample = WindowSample.take(servers: target.servers)
        startedAt = MonotonicTime.now()
        lastProgress = startedAt
        peakRSS.read(target.servers)
        ramp.start(timeout: options.timeout) {}
        loop.clock.schedule(after: Int64(options.timeout * 1000)) { [weak self] in self?.finish() }
        check()
    }

    /// Every 100 ms: peak RSS, progress, and whether the storm has converged.
    private func check() {
        guard !finished else { return }
        peakRSS.read(target.servers)
        let now = MonotonicTime.now()
        let loggedIn = ramp.loggedInCount
        if now - lastProgress >= 1_000_000_000 {
            progress.update("reconnect: \(loggedIn) logged in, \(ramp.failedCount) failed, events \(received)/\(expected(loggedIn))")
            lastProgress = now
        }
        if ramp.resolvedCount == options.users && received >= expected(loggedIn) {
            convergedAt = lastEventAt > 0 ? max(lastEventAt, ramp.finishedAt) : ramp.finishedAt
            finish()
            return
        }
        loop.clock.schedule(after: 100) { [weak self] in self?.check() }
    }

    private func expected(_ logins: Int) -> Int { logins * (logins - 1) / 2 }

    /// Whether per-connection event counts are exactly 0, 1, …, n − 1 once sorted (the
    /// connections that never logged in counting 0): each of the n logged-in
    /// connections heard of every later login, once.
    static func deliveredExactly(counts: [Int], logins: Int) -> Bool {
        guard logins <= counts.count else { return false }
        let sorted = counts.sorted()
        return sorted.prefix(counts.count - logins).allSatisfy { $0 == 0 }
            && sorted.suffix(logins).elementsEqual(0..<logins)
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        if startSample != nil {
            endSample = WindowSample.take(servers: target.servers)
            writesAfter = target.servers.total { $0.writes() }
        }
        closes = ramp?.sockets.filter { $0.state == .closed }.count ?? 0
        loop.stop()
    }

    // MARK: report

    private func makeReport() -> BenchReport {
        var notes: [String] = []
        if let setupProblem { notes.append(setupProblem) }
        let loggedIn = ramp?.loggedInCount ?? 0
        if let ramp, ramp.failedCount > 0 {
            notes.append("\(ramp.failedCount) connections did not log in: " + LoginRamp.describe(ramp.failures))
        }
        if closes > 0 { notes.append("\(closes) connections were closed during the storm") }
        let exact = Self.deliveredExactly(counts: counts, logins: loggedIn)
        if convergedAt == nil && setupProblem == nil { notes.append("did not converge within \(options.timeout) s") }
        let start = startSample ?? WindowSample.take(servers: target.servers)
        let window = MeasuredWindow(start: start, end: endSample ?? start)
        let seconds = convergedAt.map { MonotonicTime.seconds(from: startedAt, to: $0) }
        let loginSeconds = ramp.map { MonotonicTime.seconds(from: $0.startedAt, to: $0.finishedAt) }
        let writes = writesAfter.flatMap { after in writesBefore.map { after - $0 } }
        let framesOut = received + otherFrames + loggedIn
        let framesPerWrite: Double? = writes.flatMap { $0.calls > 0 ? Double(framesOut) / Double($0.calls) : nil }
        let bytesPerWrite: Double? = writes.map { $0.calls > 0 ? Double($0.bytes) / Double($0.calls) : 0 }
        let largestNodeRSS = target.addresses.count > 1 ? peakRSS.largest : nil
        let settings = BenchReport.Section("settings", "Settings", [
            target.serverFigure(),
            .init("users", .integer(Int64(options.users)), "users (one connection each, presence all)"),
            .init("connectConcurrency", .integer(Int64(options.connectConcurrency ?? options.users)), "connecting at once"),
        ])
        let results = BenchReport.Section("results", "Results", [
            .init("loggedIn", .integer(Int64(loggedIn)), "logged in"),
            .init("failed", .integer(Int64(ramp?.failedCount ?? 0)), "failed"),
            .init("closed", .integer(Int64(closes)), "closed by the server"),
            .init("expected", .integer(Int64(expected(loggedIn))), "events expected"),
            .init("received", .integer(Int64(received)), "events received"),
            .init("exact", .bool(exact && received == expected(loggedIn)), "every event exactly once"),
            .init("loginSeconds", .figure(loginSeconds, places: 3), "first connect to last login", unit: "s"),
            .init("convergeSeconds", .figure(seconds, places: 3), "first connect to last event", unit: "s"),
            .init("eventsPerSecond", .figure(seconds.map { BenchMath.rate(received, seconds: $0) }, places: 1),
                  "delivered", unit: "events/s"),
            .init("serverPeakRSSBytes", peakRSS.total.map { .integer(Int64($0)) } ?? .null, "server peak RSS", unit: "B"),
            .init("serverPeakNodeRSSBytes", largestNodeRSS.map { .integer(Int64($0)) } ?? .null,
                  "largest node's peak RSS", unit: "B"),
            .init("serverCPUMicrosPerEvent", .figure(BenchMath.microsecondsPerMessage(
                cpuSeconds: window.serverCPUSeconds, messages: received), places: 3), "server CPU per event", unit: "µs"),
            .init("serverWrites", writes.map { .integer(Int64($0.calls)) } ?? .null, "server write calls"),
            .init("framesPerWrite", .figure(framesPerWrite, places: 1), "frames per write"),
            .init("bytesPerWrite", .figure(bytesPerWrite, places: 0), "bytes per write", unit: "B"),
        ])
        return BenchReport(mode: "reconnect", sections: [settings, results, window.hostSection], notes: notes,
                           completed: setupProblem == nil && convergedAt != nil)
    }
}
