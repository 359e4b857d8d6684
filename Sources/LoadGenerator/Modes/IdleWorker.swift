import EventLoop

/// Opens and logs in a share of an idle run's connections, then keeps them open.
///
/// Connections log in as desktop devices without presence events, spread over the
/// given users and source addresses. From its login on, each connection pings once
/// every `keepalive` seconds so that the server's heartbeat never closes it, however
/// long the ramp takes.
public final class IdleWorker {
    public struct Options: Sendable {
        public var connections = 1_000
        /// Numbers the connections (device ids) so several workers never collide.
        public var firstIndex = 0
        public var uids = ["alice"]
        /// When above 0, connection i logs in as `user-(i mod users)` instead, the names
        /// `mockchat fixtures generate --users N` gives (one user per connection when
        /// `users` is at least the number of connections).
        public var users = 0
        public var connectConcurrency = 256
        public var keepalive: Double = 15
        public init() {}
    }

    /// What the ramp achieved.
    public struct Outcome: Sendable {
        public var loggedIn: Int
        public var failed: Int
        public var failures: [String: Int]
        /// Monotonic nanoseconds of the first connect and of the last login.
        public var startedAt: UInt64
        public var finishedAt: UInt64
    }

    private let loop: EventLoop
    private let target: BenchTarget
    private let options: Options
    private var ramp: LoginRamp!
    private var keepaliveTick = 0
    private var holding = false
    private var isClosing = false

    public init(loop: EventLoop, target: BenchTarget, options: Options) {
        self.loop = loop
        self.target = target
        self.options = options
    }

    /// Ramps up; `done` runs on the loop once every connection has logged in or failed.
    public func start(progress: ProgressLine, done: @escaping (Outcome) -> Void) {
        let uids = options.uids.isEmpty ? ["alice"] : options.uids
        let users = options.users
        let first = options.firstIndex
        ramp = LoginRamp(loop: loop, target: target, count: options.connections,
                         concurrency: options.connectConcurrency, seed: 0x1D1E &+ UInt64(first)) { [target] index in
            LoginFrame.bytes(uid: users > 0 ? "user-\((first + index) % users)" : uids[(first + index) % uids.count],
                             authKey: target.authKey,
                             deviceId: "bench-idle-\(first + index)", presence: .none)
        }
        var lastShown = MonotonicTime.now()
        func report() {
            guard !holding else { return }
            let now = MonotonicTime.now()
            if now - lastShown >= 1_000_000_000 {
                progress.update("idle: \(ramp.loggedInCount) logged in, \(ramp.failedCount) failed")
                lastShown = now
            }
            loop.clock.schedule(after: 200) { report() }
        }
        report()
        scheduleKeepalive()
        ramp.start(timeout: 60 + Double(options.connections) / 200) { [unowned self] in
            holding = true
            done(Outcome(loggedIn: ramp.loggedInCount, failed: ramp.failedCount, failures: ramp.failures,
                         startedAt: ramp.startedAt, finishedAt: ramp.finishedAt))
        }
    }

    /// Connections still open.
    public var openCount: Int { ramp?.sockets.filter { $0.state == .open }.count ?? 0 }

    /// Closes every connection and waits (bounded) for the closes to complete.
    public func closeAll() {
        holding = false
        isClosing = true
        guard let ramp else { return }
        for socket in ramp.sockets { socket.close() }
        loop.run(timeout: 10) { ramp.sockets.allSatisfy { $0.state == .closed || $0.state == .idle } }
    }

    /// About once a second, pings the logged-in connections whose turn has come. The
    /// turns go round `keepalive` slots, one a second since the start; a tick that comes
    /// late (after a long loop turn) takes the turns it missed too, so no connection
    /// waits much longer than `keepalive` for its ping, however slow the ramp.
    private func scheduleKeepalive() {
        let period = max(1, Int(options.keepalive))
        let start = loop.clock.now.seconds
        func tick() {
            loop.clock.schedule(after: 1000) { [weak self] in
                guard let self, !self.isClosing else { return }
                let turns = max(keepaliveTick + 1, Int(loop.clock.now.seconds - start))
                let slots = Set((keepaliveTick..<min(turns, keepaliveTick + period)).map { $0 % period })
                keepaliveTick = turns
                for socket in ramp.sockets where slots.contains(socket.index % period) && socket.state == .open
                    && ramp.loggedIn[socket.index] {
                    socket.sendText(LoginFrame.ping(id: 2 + keepaliveTick))
                }
                tick()
            }
        }
        tick()
    }
}
