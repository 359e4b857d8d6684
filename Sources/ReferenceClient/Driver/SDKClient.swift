import ChatProtocol
import EventLoop

/// One simulated app: an ``SDKStateMachine`` whose actions run over a real WebSocket
/// on an ``EventLoop``, with everything observable kept in ``log``.
///
/// Confined to the loop's thread like the loop itself (not `Sendable`). Sockets use
/// `WebSocketClient.connect`, timers the loop's clock, and handshake keys and frame
/// masks come from `seed`, so a run on a virtual clock is reproducible.
///
/// The simulated device network (``SDKCommand/network(_:)``):
/// - `down`: the socket is cut off abruptly (a TCP reset, as when the OS loses the
///   interface) and opening a socket fails with "no network".
/// - `weak`: the socket stays up and frames the client sends still arrive, but every
///   text frame from the server is discarded (logged as `frameDiscarded`), so pongs
///   and replies never reach the SDK. Close frames still arrive.
///
/// A relaunch drops whatever socket is left; calls pending at that moment never complete.
///
/// Device events (``SDKCommand/device(_:)``): a DNS failure makes the next attempts fail
/// before any TCP connection, as a resolver error; sleep and throttling move the SDK's
/// timers through a ``DeviceTimeGate`` (the server's clock runs on); a network change
/// reaches the machine.
public final class SDKClient {
    /// The client's name in observations.
    public let name: String
    public let loop: EventLoop
    /// Where the server listens.
    public let server: SocketAddress
    /// The WebSocket path on the server.
    public let path: String
    public let profile: Profile
    /// Everything observed so far, in order.
    public private(set) var log: [ClientObservation] = []

    private var machine: SDKStateMachine
    private var random: SplitMix64
    private var nextCall = 1
    private var results: [CallID: CallResult] = [:]
    private var network: NetworkCondition = .up
    private var socket: WebSocket?
    /// Bumped whenever the current socket is replaced or abandoned, so late callbacks
    /// of an old socket are ignored.
    private var generation = 0
    /// The attempt under way, until it opens or fails.
    private var opening: WebSocketClient.Attempt?
    private var timers: [TimerKind: ArmedTimer] = [:]
    private var gate = DeviceTimeGate()
    private var wakeTimer: Clock.TimerID?
    /// Attempts left to fail at name resolution: `nil` fails every one.
    private var dnsFailures: Int? = 0
    private var dnsFailureKind = DeviceEvent.DNSFailureKind.notFound
    private var timerSerial = 0
    private var inbox: [(inout SDKStateMachine, Instant) -> [SDKAction]] = []
    private var isDispatching = false

    /// A client that has not called `initialize` yet.
    public init(name: String, loop: EventLoop, server: SocketAddress, profile: Profile, seed: UInt64,
                path: String = "/v1/ws") {
        self.name = name
        self.loop = loop
        self.server = server
        self.path = path
        self.profile = profile
        self.machine = SDKStateMachine(profile: profile)
        self.random = SplitMix64(seed: seed)
    }

    // MARK: Runner API

    /// Performs one command. API calls return the id their result will be kept under;
    /// lifecycle, network and relaunch return `nil`.
    @discardableResult
    public func perform(_ command: SDKCommand) -> CallID? {
        var call: CallID?
        if command.isCall {
            call = CallID(nextCall)
            nextCall += 1
        }
        record(.command(command, call))
        if case .network(let condition) = command { network = condition }
        if case .device(let event) = command { apply(event) }
        dispatch { machine, now in machine.perform(command, call: call, now: now) }
        if network == .down || command == .relaunch, socket != nil {
            // A socket the SDK no longer counted on (after a kick or a refused login, before
            // the server closed it) dies with the network or the process too.
            record(.socketDropped)
            abandonSocket { $0.drop() }
        }
        return call
    }

    /// The result of a call, or `nil` while it is pending.
    public func result(of call: CallID) -> CallResult? { results[call] }

    /// `getConnectionStatus()`.
    public var status: ConnectionStatus { machine.status }

    /// `backgroundTaskEnabled()`.
    public var backgroundTaskEnabled: Bool { machine.backgroundTaskEnabled }

    /// `getLoggedInUser()`.
    public var loggedInUser: User? { machine.loggedInUser }

    /// Drops the socket and cancels every timer, before the loop shuts down.
    public func shutdown() {
        for entry in timers.values { loop.clock.cancel(entry.id) }
        timers = [:]
        loop.clock.cancel(wakeTimer)
        abandonSocket { $0.drop() }
    }

    // MARK: Running the machine

    /// Feeds one input to the machine and executes its actions; inputs raised while
    /// actions run are queued, so the machine never sees a nested input.
    private func dispatch(_ input: @escaping (inout SDKStateMachine, Instant) -> [SDKAction]) {
        inbox.append(input)
        guard !isDispatching else { return }
        isDispatching = true
        defer { isDispatching = false }
        while !inbox.isEmpty {
            let next = inbox.removeFirst()
            let actions = next(&machine, loop.clock.now)
            if !machine.citations.isEmpty { record(.rules(machine.citations)) }
            for action in actions { execute(action) }
        }
    }

    private func execute(_ action: SDKAction) {
        switch action {
        case .openSocket:
            openSocket()
        case .send(let id, let request):
            let text = request.json(id: id).serialized()
            record(.frameSent(text))
            socket?.send(text: Array(text.utf8))
        case .closeSocket(let code):
            record(.socketClosing(code.rawValue))
            abandonSocket { $0.close(code: code.rawValue) }
        case .dropSocket:
            record(.socketDropped)
            abandonSocket { $0.drop() }
        case .scheduleTimer(let kind, let milliseconds):
            schedule(kind, after: milliseconds)
        case .cancelTimer(let kind):
            loop.clock.cancel(timers.removeValue(forKey: kind)?.id)
        case .completeCall(let call, let result):
            results[call] = result
            record(.callCompleted(call, result))
        case .connectionEvent(let listeners, let event):
            record(.connection(event, listeners: listeners))
        case .userEvent(let listeners, let change, let user):
            for listener in listeners { record(.user(listener: listener, change, user)) }
        }
    }

    private func schedule(_ kind: TimerKind, after milliseconds: Int64) {
        loop.clock.cancel(timers[kind]?.id)
        timerSerial += 1
        timers[kind] = ArmedTimer(serial: timerSerial, deadline: loop.clock.now.advanced(by: milliseconds))
        placeTimers()
    }

    /// Puts every armed timer on the loop at the time the gate gives it, in deadline
    /// order, so that timers the gate moves to one instant fire in deadline order.
    private func placeTimers() {
        let ordered = timers.sorted { ($0.value.deadline, $0.value.serial) < ($1.value.deadline, $1.value.serial) }
        for (kind, entry) in ordered {
            loop.clock.cancel(entry.id)
            let serial = entry.serial
            // Late: at one instant the server's timers fire first, as with a driver.
            timers[kind]?.id = loop.clock.schedule(at: gate.fireTime(entry.deadline), late: true) { [weak self] in
                guard let self, self.timers[kind]?.serial == serial else { return }
                self.timers[kind] = nil
                self.record(.timerFired(kind))
                self.dispatch { machine, now in machine.timerFired(kind, now: now) }
            }
        }
    }

    /// What the driver itself does for a device event (the machine hears it too).
    private func apply(_ event: DeviceEvent) {
        let now = loop.clock.now
        switch event {
        case .dnsFailure(let attempts, let kind):
            dnsFailures = attempts
            dnsFailureKind = kind
        case .sleep(let milliseconds):
            gate.sleep(now: now, milliseconds: milliseconds)
            loop.clock.cancel(wakeTimer)
            // Scheduled before the timers it releases, so it runs first at the wake.
            wakeTimer = loop.clock.schedule(at: gate.wake ?? now, late: true) { [weak self] in
                self?.gate.woke()
                self?.wakeTimer = nil
            }
            placeTimers()
        case .throttle(let period):
            gate.throttle(now: now, period: period)
            placeTimers()
        case .networkChange:
            break
        }
    }

    private func record(_ event: ClientObservation.Event) {
        log.append(ClientObservation(at: loop.clock.now, client: name, event: event))
    }
}

/// A timer the machine armed: its deadline, and where it sits on the loop.
private struct ArmedTimer {
    var serial: Int
    var deadline: Instant
    var id: Clock.TimerID?
}

// MARK: Sockets

extension SDKClient {
    private func openSocket() {
        abandonSocket { $0.drop() }
        let current = generation
        let seed = random.next()
        record(.socketOpening(seed: seed))
        guard network != .down else {
            loop.deferToLoop { [weak self] in self?.failOpen("There is no network", current) }
            return
        }
        if dnsFailures != 0 {
            dnsFailures = dnsFailures.map { $0 - 1 }
            let host = server.host
            let reason = dnsFailureKind == .temporary
                ? "Name resolution failed temporarily for \(host) (EAI_AGAIN)" : "Name resolution failed for \(host)"
            loop.deferToLoop { [weak self] in self?.failOpen(reason, current) }
            return
        }
        // connection.close-deadline: a close frame the server does not answer within
        // closeTimeout ends the connection; a complete closing handshake ends it at once.
        var configuration = WebSocket.Configuration()
        configuration.closeTimeout = Profile.milliseconds(profile.closeTimeout)
        opening = WebSocketClient.connect(on: loop, to: server, path: path, seed: seed,
                                          configuration: configuration) { [weak self] result in
            guard let self, self.generation == current else {
                if case .success(let late) = result { late.drop() }
                return
            }
            switch result {
            case .failure(let failure):
                self.failOpen(Self.describe(failure), current)
            case .success(let opened):
                self.socket = opened
                opened.onText = { [weak self] bytes in self?.received(bytes, current) }
                opened.onClosed = { [weak self] info in self?.closed(info, current) }
                self.record(.socketOpened)
                self.dispatch { machine, now in machine.socketOpened(now: now) }
            }
        }
    }

    private func failOpen(_ reason: String, _ current: Int) {
        guard generation == current else { return }
        record(.socketFailed(reason))
        dispatch { machine, now in machine.socketFailed(reason, now: now) }
    }

    private func received(_ bytes: UnsafeRawBufferPointer, _ current: Int) {
        guard generation == current else { return }
        let text = String(decoding: bytes, as: UTF8.self)
        guard network != .weak else { return record(.frameDiscarded(text)) }
        guard let json = try? JSONParser.parse(bytes), let message = ServerMessage(json: json) else {
            return record(.frameUnreadable(text))
        }
        record(.frameReceived(text))
        dispatch { machine, now in machine.frameReceived(message, now: now) }
    }

    private func closed(_ info: WebSocket.CloseInfo, _ current: Int) {
        guard generation == current else { return }
        socket = nil
        record(.socketClosed(received: info.received, abnormal: info.abnormal))
        dispatch { machine, now in machine.socketClosed(receivedCode: info.received, now: now) }
    }

    /// Forgets the current socket (its later callbacks are ignored) and ends it with `end`.
    /// A connect still under way is abandoned too: its socket is dropped when it arrives.
    private func abandonSocket(_ end: (WebSocket) -> Void) {
        generation += 1
        opening?.cancel()                  // an upgrade still unanswered (the open deadline)
        opening = nil
        guard let current = socket else { return }
        socket = nil
        end(current)
    }

    private static func describe(_ failure: WebSocketClient.Failure) -> String {
        switch failure {
        case .connect(let error): "The server is unreachable (\(error.name))"
        case .rejected(let status, _): "The server refused the upgrade (HTTP \(status))"
        case .invalidResponse(let why): "The upgrade answer was not valid (\(why))"
        case .closed: "The server closed the connection during the upgrade"
        }
    }
}
