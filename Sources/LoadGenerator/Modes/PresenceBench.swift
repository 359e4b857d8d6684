import ChatProtocol
import EventLoop
import WireKit

/// `mockchat bench presence`: presence fan-out under churn.
///
/// `subscribers` connections log in as one watcher user (desktop devices, presence for
/// all users). `users` other users then go online and offline in turn at `churn`
/// transitions per second: each churner connects ahead of its turn, logs in when its
/// turn comes (one `user.online` to every subscriber), logs out at its next turn (one
/// `user.offline`), and reconnects. Every event is counted in a ``PresenceLedger``
/// against the transitions the server confirmed, so lost, duplicated and reordered
/// events are all reported; a correct server loses none. Each event's latency runs
/// from the send of the login (or logout) that caused it to its arrival at a subscriber.
///
/// Given a cluster's nodes, the subscribers connect to the first node and the churning
/// users to the others in turn, so every event crosses nodes through Redis.
///
/// By default the run first loads its own users through `POST /control/fixtures`
/// (`bench-watcher`, `bench-u0`…) on every server; servers without the control API take
/// any uid, so the step is skipped for them.
public final class PresenceBench {
    public struct Options: Sendable {
        public var subscribers = 1_000
        public var users = 64
        /// User transitions (online or offline) per second.
        public var churn: Double = 250
        public var duration: Double = 10
        public var loadFixtures = true
        public var connectConcurrency = 256
        /// How long to wait for the last events once churn stops.
        public var drainTimeout: Double = 10
        public init() {}
    }

    private enum Churner: Equatable { case connecting, ready, loggingIn, online, loggingOut, failed }

    static let watcher = "bench-watcher"
    static let userPrefix = "bench-u"

    private let loop: EventLoop
    private let target: BenchTarget
    private let options: Options
    private let progress: ProgressLine
    private var ramp: LoginRamp!
    private var subscribers: [BenchSocket] = []
    private var churners: [BenchSocket] = []
    private var states: [Churner] = []
    private var ledger: PresenceLedger
    private var transitions = 0
    private var skipped = 0
    private var unexpectedCloses = 0
    private var churnStart: UInt64 = 0
    private var churnEnd: UInt64 = 0
    private var lastEventAt: UInt64 = 0
    private var startSample: WindowSample?
    private var endSample: WindowSample?
    private var stopping = false
    private var finished = false
    private var setupProblem: String?
    private var lastProgress: UInt64 = 0
    private var progressReceived = 0
    private var keepaliveID = 2
    /// When each churning user's latest login (index 1) and logout (index 0) left.
    private var sentAt: [[UInt64]] = []
    private var latency = LatencyRecorder()

    public init(loop: EventLoop, target: BenchTarget, options: Options) {
        self.loop = loop
        self.target = target
        self.options = options
        progress = ProgressLine(enabled: target.showProgress)
        ledger = PresenceLedger(subscribers: 0, users: 0)
    }

    /// Runs the benchmark on the loop and returns its report.
    public func run() -> BenchReport {
        if options.loadFixtures {
            progress.update("presence: loading \(options.users + 1) users")
            loadFixtures()
        } else {
            openSubscribers()
        }
        loop.run()
        progress.clear()
        let report = makeReport()
        for socket in subscribers + churners { socket.close() }
        loop.run(timeout: 5) { (self.subscribers + self.churners).allSatisfy { $0.state != .open && $0.state != .upgrading && $0.state != .connecting } }
        return report
    }

    /// The churned user a uid names, if any.
    static func userIndex(_ uid: String) -> Int? {
        guard uid.hasPrefix(userPrefix) else { return nil }
        return Int(uid.dropFirst(userPrefix.count))
    }

    // MARK: setup

    /// Loads the users on every server, then opens the subscribers.
    private func loadFixtures() {
        let uids = [Self.watcher] + (0..<options.users).map { Self.userPrefix + String($0) }
        ControlRequest.loadUsers(uids, on: loop, to: target.addresses) { [unowned self] problem in
            guard let problem else { return openSubscribers() }
            setupProblem = problem
            finish()
        }
    }

    /// Where churning user `index` connects: the servers after the first in turn, or the only one.
    private func churnAddress(_ index: Int) -> SocketAddress {
        let count = target.addresses.count
        return count == 1 ? target.address : target.addresses[1 + index % (count - 1)]
    }

    private func openSubscribers() {
        progress.update("presence: opening \(options.subscribers) subscribers")
        ramp = LoginRamp(loop: loop, target: target.narrowed(to: [0]), count: options.subscribers,
                         concurrency: options.connectConcurrency,
                         seed: 0x5355_4253) { [target] index in
            LoginFrame.bytes(uid: Self.watcher, authKey: target.authKey, deviceId: "bench-sub-\(index)", presence: .allUsers)
        }
        ramp.start(timeout: 30 + Double(options.subscribers) / 500) { [unowned self] in subscribersReady() }
    }

    private func subscribersReady() {
        subscribers = ramp.sockets.filter { ramp.loggedIn[$0.index] }
        guard !subscribers.isEmpty else {
            setupProblem = "no subscriber logged in"
            finish()
            return
        }
        ledger = PresenceLedger(subscribers: subscribers.count, users: options.users)
        for (position, socket) in subscribers.enumerated() {
            socket.onText = { [unowned self] payload in
                guard case .presence(let online, let uid) = ServerFrameKind(payload) else { return }
                lastEventAt = MonotonicTime.now()
                let user = Self.userIndex(uid)
                if let user, user < sentAt.count, sentAt[user][online ? 1 : 0] > 0 {
                    latency.record(nanoseconds: lastEventAt &- sentAt[user][online ? 1 : 0])
                }
                ledger.receive(subscriber: position, user: user, online: online)
            }
            socket.onClosed = { [unowned self] in unexpectedCloses += 1 }
        }
        states = Array(repeating: .connecting, count: options.users)
        sentAt = Array(repeating: [0, 0], count: options.users)
        churners = (0..<options.users).map { BenchSocket(index: $0, seed: 0xC4_0000 &+ UInt64($0)) }
        for index in churners.indices { connectChurner(index) }
        progress.update("presence: connecting \(options.users) churning users")
        waitForChurners(attempts: 0)
    }

    private func waitForChurners(attempts: Int) {
        if states.allSatisfy({ $0 == .ready }) || attempts > 500 {
            startChurn()
            return
        }
        loop.clock.schedule(after: 10) { [weak self] in self?.waitForChurners(attempts: attempts + 1) }
    }

    private func connectChurner(_ index: Int) {
        let socket = churners[index]
        states[index] = .connecting
        socket.open(on: loop, to: churnAddress(index), from: target.source(for: index)) { [unowned self] result in
            guard case .success = result else {
                states[index] = .failed
                // Try again a little later; the turn is skipped meanwhile.
                loop.clock.schedule(after: 50) { [weak self] in
                    guard let self, !self.stopping else { return }
                    self.connectChurner(index)
                }
                return
            }
            states[index] = .ready
            socket.onText = { [unowned self] payload in churnerReply(index, payload) }
            socket.onClosed = { [unowned self] in
                if states[index] == .online || states[index] == .loggingIn { unexpectedCloses += 1 }
                states[index] = .connecting
                if !stopping { connectChurner(index) }
            }
        }
    }

    // MARK: churn

    private func startChurn() {
        churnStart = MonotonicTime.now()
        churnEnd = churnStart + UInt64(options.duration * 1e9)
        startSample = WindowSample.take(servers: target.servers)
        lastProgress = churnStart
        scheduleKeepalive()
        tick()
    }

    private func tick() {
        guard !finished else { return }
        let now = MonotonicTime.now()
        if !stopping {
            let due = Int(Double(min(now, churnEnd) - churnStart) / 1e9 * options.churn)
            while transitions < due {
                let index = transitions % options.users
                transitions += 1
                switch states[index] {
                case .ready:
                    states[index] = .loggingIn
                    sentAt[index][1] = MonotonicTime.now()
                    churners[index].sendText(LoginFrame.bytes(uid: Self.userPrefix + String(index), authKey: target.authKey,
                                                              deviceId: "bench-churn-\(index)", presence: .none))
                case .online:
                    logOut(index)
                default:
                    skipped += 1
                }
            }
            if now >= churnEnd { beginStopping() }
        } else if !states.contains(.loggingIn) && !states.contains(.loggingOut) && !states.contains(.online)
                    && ledger.received >= ledger.expected && lastEventAt > 0 {
            finish()
            return
        }
        showProgress(now)
        loop.clock.schedule(after: 1) { [weak self] in self?.tick() }
    }

    private func churnerReply(_ index: Int, _ payload: UnsafeRawBufferPointer) {
        guard case .reply(let id, let ok) = ServerFrameKind(payload) else { return }
        switch (id, states[index]) {
        case (1, .loggingIn):
            if ok {
                states[index] = .online
                ledger.confirm(user: index, online: true)
                if stopping { logOut(index) }
            } else {
                states[index] = .failed
                churners[index].close()
            }
        case (2, .loggingOut):
            // The server closes the connection after the reply; the close reconnects.
            if ok { ledger.confirm(user: index, online: false) }
        default:
            break
        }
    }

    private func logOut(_ index: Int) {
        states[index] = .loggingOut
        sentAt[index][0] = MonotonicTime.now()
        churners[index].sendText(LoginFrame.logout(id: 2))
    }

    private func beginStopping() {
        stopping = true
        for index in states.indices where states[index] == .online { logOut(index) }
        loop.clock.schedule(after: Int64(options.drainTimeout * 1000)) { [weak self] in self?.finish() }
    }

    private func scheduleKeepalive() {
        loop.clock.schedule(after: 10_000) { [weak self] in
            guard let self, !self.finished else { return }
            self.keepaliveID += 1
            for socket in self.subscribers { socket.sendText(LoginFrame.ping(id: self.keepaliveID)) }
            self.scheduleKeepalive()
        }
    }

    private func showProgress(_ now: UInt64) {
        guard now - lastProgress >= 1_000_000_000 else { return }
        let rate = BenchMath.rate(ledger.received - progressReceived, seconds: MonotonicTime.seconds(from: lastProgress, to: now))
        progress.update("presence \(stopping ? "draining" : "churning"): transitions \(transitions)  events \(ledger.received)/\(ledger.expected)  \(Int(rate))/s")
        lastProgress = now
        progressReceived = ledger.received
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        stopping = true
        if startSample != nil { endSample = WindowSample.take(servers: target.servers) }
        loop.stop()
    }

    // MARK: report

    private func makeReport() -> BenchReport {
        var notes: [String] = []
        if let setupProblem { notes.append(setupProblem) }
        if let ramp, ramp.failedCount > 0 {
            notes.append("\(ramp.failedCount) subscribers did not log in: " + LoginRamp.describe(ramp.failures))
        }
        if skipped > 0 { notes.append("\(skipped) transitions were skipped: their user was still reconnecting") }
        if unexpectedCloses > 0 { notes.append("\(unexpectedCloses) connections closed unexpectedly") }
        let start = startSample ?? WindowSample.take(servers: target.servers)
        let window = MeasuredWindow(start: start, end: endSample ?? start)
        let deliverySeconds = lastEventAt > churnStart ? MonotonicTime.seconds(from: churnStart, to: lastEventAt) : 0
        let confirmed = subscribers.isEmpty ? 0 : ledger.expected / max(1, subscribers.count)
        let eventLatency = latency.summary
        let settings = BenchReport.Section("settings", "Settings", [
            target.serverFigure(clusterLabel: "servers (subscribers on the first, churners on the others)"),
            .init("subscribers", .integer(Int64(options.subscribers)), "subscribers"),
            .init("users", .integer(Int64(options.users)), "churning users"),
            .init("churnRate", .figure(options.churn, places: 1), "churn", unit: "transitions/s"),
            .init("offeredEventRate", .figure(options.churn * Double(options.subscribers), places: 1), "offered events",
                  unit: "events/s"),
            .init("durationSeconds", .figure(options.duration, places: 3), "churn time", unit: "s"),
        ])
        let results = BenchReport.Section("results", "Results", [
            .init("subscribersLoggedIn", .integer(Int64(subscribers.count)), "subscribers logged in"),
            .init("transitions", .integer(Int64(confirmed)), "confirmed transitions"),
            .init("skipped", .integer(Int64(skipped)), "skipped transitions"),
            .init("expected", .integer(Int64(ledger.expected)), "events expected"),
            .init("received", .integer(Int64(ledger.received)), "events received"),
            .init("lost", .integer(Int64(ledger.lost)), "events lost"),
            .init("unexpected", .integer(Int64(ledger.unexpected)), "events unexpected"),
            .init("outOfOrder", .integer(Int64(ledger.outOfOrder)), "events out of order"),
            .init("deliverySeconds", .figure(deliverySeconds, places: 3), "churn start to last event", unit: "s"),
            .init("eventsPerSecond", .figure(BenchMath.rate(ledger.received, seconds: deliverySeconds), places: 1),
                  "delivered", unit: "events/s"),
            .init("latencyP50Micros", .double(eventLatency.p50), "event latency p50", unit: "µs"),
            .init("latencyP99Micros", .double(eventLatency.p99), "event latency p99", unit: "µs"),
            .init("latencyP999Micros", .double(eventLatency.p999), "event latency p99.9", unit: "µs"),
            .init("latencyMaxMicros", .double(eventLatency.max), "event latency max", unit: "µs"),
            .init("serverCPUMicrosPerEvent", .figure(BenchMath.microsecondsPerMessage(
                cpuSeconds: window.serverCPUSeconds, messages: ledger.received), places: 3),
                  "server CPU per event", unit: "µs"),
        ])
        return BenchReport(mode: "presence", sections: [settings, results, window.hostSection], notes: notes,
                           completed: setupProblem == nil && confirmed > 0)
    }
}
