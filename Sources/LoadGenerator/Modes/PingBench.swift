import ChatProtocol
import EventLoop

/// `mockchat bench ping`: request/response latency and throughput.
///
/// Every connection logs in (desktop device, no presence events) and then sends
/// `{"id":N,"op":"ping"}`:
/// - **open loop** (`rate > 0`): pings leave on a fixed ``PingSchedule``, whatever the
///   replies do, and latency counts from each ping's intended send time. Pacing spins
///   the loop instead of sleeping, so sends leave within microseconds of their time;
///   the generator therefore uses a whole core.
/// - **closed loop** (`rate == 0`): each connection keeps `pipeline` pings in flight and
///   sends the next one when a reply comes back; this measures the most the server can
///   answer, and latency counts from the actual send.
///
/// Given a cluster's nodes, connection i goes to node i mod n.
///
/// The first `warmup` seconds are not measured. The server's CPU time over the measured
/// window (the nodes' summed), divided by the replies in it, gives CPU per ping.
public final class PingBench {
    public struct Options: Sendable {
        public var connections = 100
        /// Pings per second over all connections; 0 for the closed loop.
        public var rate: Double = 10_000
        /// Pings in flight per connection in the closed loop.
        public var pipeline = 1
        public var duration: Double = 10
        public var warmup: Double = 2
        public var uid = "alice"
        public var connectConcurrency = 256
        /// How long to wait for the last replies after the last send.
        public var drainTimeout: Double = 3
        public init() {}
    }

    private let loop: EventLoop
    private let target: BenchTarget
    private let options: Options
    private let progress: ProgressLine
    private var ramp: LoginRamp!
    private var active: [BenchSocket] = []
    private var schedule: PingSchedule?
    private var windowStart: UInt64 = 0
    private var windowEnd: UInt64 = 0
    private var startSample: WindowSample?
    private var endSample: WindowSample?
    private var nextPing = 0
    private var lastPing = 0
    private var sendingDone = false
    private var sendTimes: [[UInt64]] = []
    private var nextSequence: [Int] = []
    private var measured = LatencyRecorder()
    private var sendLag = LatencyRecorder()
    private var sent = 0
    private var received = 0
    private var receivedInWindow = 0
    private var measuredSent = 0
    private var errors = 0
    private var lastProgress: UInt64 = 0
    private var progressReceived = 0
    private var finished = false

    public init(loop: EventLoop, target: BenchTarget, options: Options) {
        self.loop = loop
        self.target = target
        self.options = options
        progress = ProgressLine(enabled: target.showProgress)
    }

    /// Runs the benchmark on the loop and returns its report.
    public func run() -> BenchReport {
        ramp = LoginRamp(loop: loop, target: target, count: options.connections, concurrency: options.connectConcurrency,
                         seed: 0x5049_4E47) { [options, target] index in
            LoginFrame.bytes(uid: options.uid, authKey: target.authKey, deviceId: "bench-ping-\(index)", presence: .none)
        }
        progress.update("ping: opening \(options.connections) connections")
        ramp.start(timeout: 30 + Double(options.connections) / 500) { [unowned self] in self.rampDone() }
        loop.run()
        progress.clear()
        let report = makeReport()
        for socket in ramp.sockets { socket.close() }
        loop.run(timeout: 5) { ramp.sockets.allSatisfy { $0.state == .closed } }
        return report
    }

    private func rampDone() {
        active = ramp.sockets.filter { ramp.loggedIn[$0.index] }
        guard !active.isEmpty else {
            finish()
            return
        }
        let now = MonotonicTime.now()
        let start = now + 20_000_000
        windowStart = start + UInt64(options.warmup * 1e9)
        windowEnd = windowStart + UInt64(options.duration * 1e9)
        sendTimes = Array(repeating: Array(repeating: 0, count: max(1, options.pipeline)), count: active.count)
        nextSequence = Array(repeating: 0, count: active.count)
        for (position, socket) in active.enumerated() {
            socket.onText = { [unowned self] payload in self.receive(payload, position: position) }
            socket.onClosed = { [unowned self] in self.errors += 1 }
        }
        lastProgress = now
        if options.rate > 0 {
            let schedule = PingSchedule(rate: options.rate, connections: active.count, start: start)
            self.schedule = schedule
            lastPing = schedule.firstPing(notBefore: windowEnd)
            spin()
        } else {
            for position in active.indices {
                for _ in 0..<max(1, options.pipeline) { sendClosedLoop(position) }
                active[position].flush()
            }
            tickClosedLoop()
        }
    }

    // MARK: open loop

    private func spin() {
        guard !finished, let schedule else { return }
        let now = MonotonicTime.now()
        observeWindow(now)
        if !sendingDone {
            let due = min(schedule.dueCount(at: now), lastPing)
            if nextPing < due {
                var touched: [Int] = []
                while nextPing < due {
                    let position = schedule.connection(ofPing: nextPing)
                    let sequence = schedule.sequence(ofPing: nextPing)
                    let intended = schedule.intendedTime(ofPing: nextPing)
                    if intended >= windowStart { sendLag.record(nanoseconds: now - intended) }
                    if intended >= windowStart && intended < windowEnd { measuredSent += 1 }
                    active[position].queueText(LoginFrame.ping(id: sequence + 2))
                    touched.append(position)
                    nextPing += 1
                    sent += 1
                }
                for position in touched { active[position].flush() }
            }
            if nextPing >= lastPing {
                sendingDone = true
                loop.clock.schedule(after: Int64(options.drainTimeout * 1000)) { [weak self] in self?.finish() }
            }
        } else if received >= sent {
            finish()
            return
        }
        showProgress(now)
        loop.deferToLoop { [weak self] in self?.spin() }
    }

    // MARK: closed loop

    private func sendClosedLoop(_ position: Int) {
        let sequence = nextSequence[position]
        nextSequence[position] += 1
        sendTimes[position][sequence % sendTimes[position].count] = MonotonicTime.now()
        active[position].queueText(LoginFrame.ping(id: sequence + 2))
        sent += 1
    }

    private func tickClosedLoop() {
        guard !finished else { return }
        let now = MonotonicTime.now()
        observeWindow(now)
        if now >= windowEnd, !sendingDone {
            sendingDone = true
            loop.clock.schedule(after: Int64(options.drainTimeout * 1000)) { [weak self] in self?.finish() }
        }
        if sendingDone, received >= sent {
            finish()
            return
        }
        showProgress(now)
        loop.clock.schedule(after: 5) { [weak self] in self?.tickClosedLoop() }
    }

    // MARK: replies

    private func receive(_ payload: UnsafeRawBufferPointer, position: Int) {
        guard case .reply(let id, let ok) = ServerFrameKind(payload), let id, id >= 2 else { return }
        let now = MonotonicTime.now()
        received += 1
        if !ok { errors += 1 }
        let sequence = Int(id - 2)
        if now >= windowStart && now < windowEnd { receivedInWindow += 1 }
        if let schedule {
            let intended = schedule.intendedTime(connection: position, sequence: sequence)
            if intended >= windowStart && intended < windowEnd {
                measured.record(nanoseconds: now > intended ? now - intended : 0)
            }
        } else {
            let times = sendTimes[position]
            let sentAt = times[sequence % times.count]
            if sentAt >= windowStart && sentAt < windowEnd {
                measured.record(nanoseconds: now - sentAt)
            }
            if !sendingDone { sendClosedLoop(position) }
        }
    }

    private func observeWindow(_ now: UInt64) {
        if startSample == nil, now >= windowStart { startSample = WindowSample.take(servers: target.servers) }
        if endSample == nil, now >= windowEnd { endSample = WindowSample.take(servers: target.servers) }
    }

    private func showProgress(_ now: UInt64) {
        guard now - lastProgress >= 1_000_000_000 else { return }
        let seconds = MonotonicTime.seconds(from: lastProgress, to: now)
        let phase = now < windowStart ? "warm-up" : now < windowEnd ? "measuring" : "draining"
        let rate = BenchMath.rate(received - progressReceived, seconds: seconds)
        let p99 = measured.summary.p99
        progress.update("ping \(phase): sent \(sent)  replies \(received)  \(Int(rate))/s  p99 \(Int(p99)) µs  errors \(errors)")
        lastProgress = now
        progressReceived = received
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        if endSample == nil { endSample = WindowSample.take(servers: target.servers) }
        loop.stop()
    }

    // MARK: report

    private func makeReport() -> BenchReport {
        let start = startSample ?? WindowSample.take(servers: target.servers)
        let window = MeasuredWindow(start: start, end: endSample ?? start)
        let latency = measured.summary
        let replies = Int(latency.count)
        let openLoop = options.rate > 0
        var notes: [String] = []
        if ramp.failedCount > 0 {
            notes.append("\(ramp.failedCount) connections did not log in: " + LoginRamp.describe(ramp.failures))
        }
        let unanswered = openLoop ? max(0, measuredSent - replies) : max(0, sent - received)
        if unanswered > 0 { notes.append("\(unanswered) pings got no reply before the drain timeout") }
        if openLoop, sendLag.summary.p99 > 1000 {
            notes.append("the generator fell behind its schedule (send lag p99 \(Int(sendLag.summary.p99)) µs); latencies still count from the intended times")
        }
        let settings = BenchReport.Section("settings", "Settings", [
            target.serverFigure(),
            .init("connections", .integer(Int64(options.connections)), "connections"),
            .init("loop", .string(openLoop ? "open" : "closed"), "loop"),
            .init("targetRate", openLoop ? .figure(options.rate, places: 1) : .null, "target rate", unit: "pings/s"),
            .init("pipeline", openLoop ? .null : .integer(Int64(options.pipeline)), "pings in flight per connection"),
            .init("warmupSeconds", .figure(options.warmup, places: 3), "warm-up", unit: "s"),
            .init("durationSeconds", .figure(options.duration, places: 3), "measured", unit: "s"),
        ])
        let cpuPerPing = BenchMath.microsecondsPerMessage(cpuSeconds: window.serverCPUSeconds, messages: replies)
        let results = BenchReport.Section("results", "Results", [
            .init("connected", .integer(Int64(ramp.loggedInCount)), "logged in"),
            .init("sent", .integer(Int64(sent)), "pings sent"),
            .init("replies", .integer(Int64(received)), "replies"),
            .init("errors", .integer(Int64(errors)), "errors"),
            .init("measuredReplies", .integer(Int64(replies)), "measured replies"),
            .init("unanswered", .integer(Int64(unanswered)), "unanswered"),
            .init("achievedRate", .figure(BenchMath.rate(receivedInWindow, seconds: options.duration), places: 1),
                  "achieved rate", unit: "replies/s"),
            .init("p50Micros", .double(latency.p50), "p50", unit: "µs"),
            .init("p99Micros", .double(latency.p99), "p99", unit: "µs"),
            .init("p999Micros", .double(latency.p999), "p99.9", unit: "µs"),
            .init("maxMicros", .double(latency.max), "max", unit: "µs"),
            .init("sendLagP99Micros", openLoop ? .double(sendLag.summary.p99) : .null, "send lag p99", unit: "µs"),
            .init("serverCPUMicrosPerPing", .figure(cpuPerPing, places: 3), "server CPU per ping", unit: "µs"),
        ])
        return BenchReport(mode: "ping", sections: [settings, results, window.hostSection], notes: notes,
                           completed: ramp.loggedInCount > 0 && replies > 0)
    }
}
