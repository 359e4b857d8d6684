import EventLoop

/// Opens and logs in a set of connections, at most `concurrency` at a time.
///
/// Each socket connects, upgrades and sends its `login` (id 1); it counts as logged in
/// when the result arrives. The ramp ends when every socket has either logged in or
/// failed, or when `timeout` seconds pass (the rest then count as failed).
final class LoginRamp {
    let loop: EventLoop
    let target: BenchTarget
    let sockets: [BenchSocket]
    private let concurrency: Int
    private let loginFrame: (Int) -> [UInt8]
    private var next = 0
    private var inFlight = 0
    private(set) var loggedIn: [Bool]
    private(set) var loggedInCount = 0
    private(set) var failedCount = 0
    /// The first failure reasons seen, with counts.
    private(set) var failures: [String: Int] = [:]
    private(set) var startedAt: UInt64 = 0
    private(set) var finishedAt: UInt64 = 0
    private var onDone: (() -> Void)?
    /// Gets every text frame other than the login reply, before and after the login.
    var onOtherText: ((BenchSocket, UnsafeRawBufferPointer) -> Void)?
    private var finished = false

    init(loop: EventLoop, target: BenchTarget, count: Int, concurrency: Int, seed: UInt64,
         loginFrame: @escaping (Int) -> [UInt8]) {
        self.loop = loop
        self.target = target
        self.concurrency = max(1, concurrency)
        self.loginFrame = loginFrame
        sockets = (0..<count).map { BenchSocket(index: $0, seed: seed &+ UInt64($0)) }
        loggedIn = Array(repeating: false, count: count)
    }

    var resolvedCount: Int { loggedInCount + failedCount }

    /// Starts the ramp; `done` runs once on the loop.
    func start(timeout: Double, done: @escaping () -> Void) {
        onDone = done
        startedAt = MonotonicTime.now()
        if sockets.isEmpty {
            finish()
            return
        }
        loop.clock.schedule(after: Int64(timeout * 1000)) { [weak self] in self?.finish() }
        launch()
    }

    private func launch() {
        while inFlight < concurrency, next < sockets.count, !finished {
            let socket = sockets[next]
            next += 1
            inFlight += 1
            open(socket)
        }
    }

    private func open(_ socket: BenchSocket) {
        socket.open(on: loop, to: target.address(for: socket.index), from: target.source(for: socket.index)) { [self] result in
            switch result {
            case .failure(let failure):
                resolve(socket, ok: false, reason: failure.description)
            case .success:
                socket.onText = { [unowned self, unowned socket] payload in
                    switch ServerFrameKind(payload) {
                    case .reply(id: 1, ok: true): resolve(socket, ok: true, reason: nil)
                    case .reply(id: 1, ok: false): resolve(socket, ok: false, reason: "login refused")
                    default: onOtherText?(socket, payload)
                    }
                }
                socket.onClosed = { [unowned self, unowned socket] in
                    resolve(socket, ok: false, reason: "closed before the login reply")
                }
                socket.sendText(loginFrame(socket.index))
            }
        }
    }

    private func resolve(_ socket: BenchSocket, ok: Bool, reason: String?) {
        guard !finished else { return }
        socket.onText = onOtherText.map { handler in { [unowned socket] payload in handler(socket, payload) } }
        socket.onClosed = nil
        inFlight -= 1
        if ok {
            loggedIn[socket.index] = true
            loggedInCount += 1
        } else {
            failedCount += 1
            if let reason, failures.count < 8 || failures[reason] != nil { failures[reason, default: 0] += 1 }
        }
        if resolvedCount == sockets.count {
            finish()
        } else {
            launch()
        }
    }

    /// Failure reasons with their counts, sorted, for a report note: `reason (count), …`.
    static func describe(_ failures: [String: Int]) -> String {
        failures.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        finishedAt = MonotonicTime.now()
        failedCount = sockets.count - loggedInCount
        let done = onDone
        onDone = nil
        done?()
    }
}
