import ChatProtocol
import EventLoop
import Logging
import MockChatCore

/// Connects one node's engine to the cluster: turns the engine's cluster actions into
/// Redis commands and the `mockchat:events` channel into engine inputs
/// (``ClusterEvent``). Runs on the server's loop through hiredis's libuv adapter.
///
/// While Redis is unreachable the node keeps serving on its own: its device
/// announcements loop straight back to its engine, and it retries, first after
/// `retryMilliseconds`, then twice as long each time up to `maxRetryMilliseconds`, for
/// as long as the outage lasts. On reconnecting it rejoins (stores what Redis lost, drops
/// what ended meanwhile) and reads a snapshot in the same script, ordered against the
/// channel by ``ClusterSync``, so every node converges (docs/CLUSTER.md).
public final class ClusterBridge {
    /// Where the cluster lives and how this node takes part.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// This node's name: unique in the cluster, no `/`.
        public var node: String
        /// A killed node's users go offline on the others within this time.
        public var nodeTTLMilliseconds: Int64 = 3000
        /// The first retry after Redis became unreachable; each later one waits twice as
        /// long, up to `maxRetryMilliseconds`.
        public var retryMilliseconds: Int64 = 250
        public var maxRetryMilliseconds: Int64 = 2000
        /// An attempt that has not subscribed within this time is abandoned and retried
        /// (a connect that nothing answers, not even with a refusal).
        public var connectTimeoutMilliseconds: Int64 = 3000

        public init(host: String, port: Int, node: String) {
            self.host = host
            self.port = port
            self.node = node
        }

        /// Parses `redis://HOST:PORT` (an IPv6 host in brackets) and checks the node name:
        /// 1 to 64 letters, digits, `.`, `_` or `-`.
        public init(url: String, node: String) throws(ClusterConfigurationError) {
            let expected = "--cluster '\(url.prefix(200))': expected redis://HOST:PORT with a port from 1 to 65535"
            guard url.hasPrefix("redis://") else { throw ClusterConfigurationError(expected) }
            let rest = url.dropFirst("redis://".count)
            guard let colon = rest.lastIndex(of: ":"), colon != rest.startIndex else { throw ClusterConfigurationError(expected) }
            let digits = rest[rest.index(after: colon)...]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(digits),
                  (1...65_535).contains(port) else {
                throw ClusterConfigurationError(expected)
            }
            var host = rest[..<colon]
            if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty, !host.contains("/"), !host.contains("@"), !host.contains(where: \.isWhitespace) else {
                throw ClusterConfigurationError(expected)
            }
            guard (1...64).contains(node.utf8.count),
                  node.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
                throw ClusterConfigurationError("--node '\(node.prefix(200))': a name of 1 to 64 letters, digits, '.', '_' or '-', unique among the nodes")
            }
            self.init(host: String(host), port: port, node: node)
        }
    }

    let configuration: Configuration
    private let loop: EventLoop
    private let logger: Logger
    /// Delivers a decoded event (or a snapshot) to the server.
    var onEvent: (ClusterEvent) -> Void = { _ in }
    var onSnapshot: ([ClusterDevice]) -> Void = { _ in }
    /// The devices this node holds now, for rejoining.
    var localDevices: () -> [ClusterDevice] = { [] }
    private var commands: RedisConnection?
    private var subscriber: RedisConnection?
    private var timer: Clock.TimerID?
    /// Abandons a connection attempt nothing answers.
    private var connectDeadline: Clock.TimerID?
    private var isStopped = false
    private var wasConnected = false
    /// Failed attempts since Redis was last reachable, and when that was.
    private var failedAttempts = 0
    private var outageStart: UInt64?
    /// Orders the channel against this node's snapshots.
    private var sync = ClusterSync()
    /// A re-registration after an expired liveness key is on its way: later heartbeats
    /// that still find the key gone need not register again.
    private var isRegistering = false
    /// Subscribed: commands go to Redis rather than loop back.
    public private(set) var isReady = false

    init(loop: EventLoop, configuration: Configuration, logger: Logger) {
        self.loop = loop
        self.configuration = configuration
        self.logger = logger
    }

    /// Connects (and keeps reconnecting) until ``stop()``.
    func start() {
        connect()
    }

    // MARK: Engine actions

    /// Stores a device that logged in here once Redis has applied the device policy
    /// across the cluster (``ClusterScripts/claim``); `answer` gets whether it was
    /// stored (false: refused). While Redis is unreachable the node decides alone.
    func claim(_ device: ClusterDevice, _ claim: DeviceClaim, answer: @escaping (Bool) -> Void) {
        guard isReady, let commands else { return decideAlone(device, answer: answer) }
        let arguments = ClusterScripts.claimArguments(device, claim, message: ClusterEvent.added(device).message,
                                                      now: loop.clock.now.seconds)
        commands.evaluate(ClusterScripts.claim, arguments) {
            [weak self] reply in
            guard let self, !self.isStopped else { return }
            switch reply {
            case .integer(0): answer(false)
            case .array: answer(true)
            case nil: self.decideAlone(device, answer: answer)  // the connection ended first
            case let other?:
                self.logger.error("cluster: claim of \(device.field) for \(device.uid) failed: \(other)")
                answer(true)
            }
        }
    }

    /// Removes a device that ended here; `acknowledged` runs once Redis has removed it
    /// (at once while Redis is unreachable, or if the connection ends first).
    func retract(_ device: ClusterDevice, lastActiveAt: Double, acknowledged: @escaping () -> Void = {}) {
        guard isReady, let commands else {
            onEvent(.removed(uid: device.uid, field: device.field, lastActiveAt: lastActiveAt))
            return acknowledged()
        }
        commands.evaluate(ClusterScripts.remove, [device.uid, device.field, String(lastActiveAt)]) { _ in acknowledged() }
    }

    /// Forgets every device in Redis and tells the other nodes to reset.
    func reset() {
        guard isReady, let commands else { return logger.warning("cluster: Redis unreachable; reset is local only") }
        commands.evaluate(ClusterScripts.reset, [ClusterEvent.reset(node: configuration.node).message])
    }

    /// Without Redis: the device counts at once, on this node only; the rejoin stores it.
    private func decideAlone(_ device: ClusterDevice, answer: @escaping (Bool) -> Void) {
        onEvent(.added(device))
        loop.deferToLoop { answer(true) }
    }

    // MARK: Connection

    /// Stops retrying and closes the connections once commands already sent are answered.
    func stop() {
        isStopped = true
        isReady = false
        loop.clock.cancel(timer)
        loop.clock.cancel(connectDeadline)
        subscriber?.close()
        commands?.close(flush: true)
    }

    /// Whether hiredis still holds a libuv handle (the loop must not shut down before).
    var isOpen: Bool { commands?.isOpen == true || subscriber?.isOpen == true }

    /// Closes at once whatever ``stop()`` left open.
    func forceClose() {
        subscriber?.close()
        commands?.close()
    }

    private func connect() {
        guard !isStopped else { return }
        do {
            let commands = try RedisConnection(loop: loop, host: configuration.host, port: configuration.port)
            let subscriber = try RedisConnection(loop: loop, host: configuration.host, port: configuration.port)
            self.commands = commands
            self.subscriber = subscriber
            for connection in [commands, subscriber] {
                connection.onDisconnect = { [unowned self] reason in self.lost(reason) }
                connection.onConnect = { [unowned self] in self.connected() }
            }
            connectDeadline = loop.clock.schedule(after: configuration.connectTimeoutMilliseconds) { [unowned self] in
                self.connectDeadline = nil
                self.lost("no answer within \(self.configuration.connectTimeoutMilliseconds) ms")
            }
        } catch {
            lost("\(error)")
        }
    }

    private func connected() {
        guard let commands, let subscriber, commands.isConnected, subscriber.isConnected else { return }
        subscriber.subscribe("mockchat:events", onSubscribed: { [unowned self] in self.subscribed() }) {
            [unowned self] text in
            guard let message = ClusterMessage(text) else {
                return self.logger.warning("cluster: ignoring a message that is not ours: \(text.prefix(200))")
            }
            self.follow(self.sync.received(message))
        }
    }

    private func subscribed() {
        loop.clock.cancel(connectDeadline)
        connectDeadline = nil
        if !wasConnected {
            logger.notice("cluster: node \(configuration.node) joined Redis at \(configuration.host):\(configuration.port)")
        } else {
            let outage = outageStart.map { MonotonicTime.seconds(from: $0, to: MonotonicTime.now()) } ?? 0
            logger.notice("cluster: node \(configuration.node) reconnected to Redis at \(configuration.host):\(configuration.port) after \(Self.seconds(outage)) s unreachable (\(failedAttempts) failed attempts); rejoining")
        }
        wasConnected = true
        failedAttempts = 0
        outageStart = nil
        isReady = true
        rejoin(readingSnapshot: true)
        beat()
    }

    /// Registers this node with its current devices. `readingSnapshot` (after a
    /// (re)connect or a gap): also applies the snapshot taken in the same script, the
    /// channel's messages waiting in ``sync`` until then. Without it (an expired liveness
    /// key), the view stays as the unbroken subscription built it, transition by
    /// transition, and the snapshot is ignored.
    private func rejoin(readingSnapshot: Bool) {
        guard let commands else { return }
        if readingSnapshot { sync.resyncStarted() } else { isRegistering = true }
        var arguments = [configuration.node, String(livenessTTL), String(loop.clock.now.seconds)]
        for device in localDevices() {
            arguments += [device.uid, device.field, ClusterEvent.storedValue(device), ClusterEvent.added(device).message]
        }
        commands.evaluate(ClusterScripts.rejoin, arguments) { [weak self] reply in
            guard let self, !self.isStopped else { return }
            if !readingSnapshot { self.isRegistering = false }
            guard let reply, readingSnapshot else { return }
            let items = reply.elements
            guard case .integer(let seq)? = items.first else {
                return self.logger.error("cluster: rejoin failed: \(reply)")
            }
            let texts = items.dropFirst().compactMap(\.text)
            var devices: [ClusterDevice] = []
            for start in stride(from: 0, to: texts.count - 2, by: 3) {
                if let device = ClusterEvent.device(uid: texts[start], field: texts[start + 1], stored: texts[start + 2]) {
                    devices.append(device)
                }
            }
            guard let steps = self.sync.snapshotArrived(seq: Int64(seq)) else { return }
            self.onSnapshot(devices)
            self.follow(steps)
        }
    }

    private func follow(_ steps: [ClusterSync.Step]) {
        for step in steps {
            switch step {
            case .apply(let event):
                onEvent(event)
            case .resync:
                logger.warning("cluster: node \(configuration.node) missed messages of the event channel; reading a snapshot")
                rejoin(readingSnapshot: true)
            }
        }
    }

    /// How long the liveness key lives: two thirds of the TTL, so a killed node is
    /// reaped within the TTL by the checks every third of it.
    private var livenessTTL: Int64 { max(1, configuration.nodeTTLMilliseconds * 2 / 3) }

    /// Renews this node's liveness key and reaps dead nodes, every third of the TTL. If
    /// the key had expired (the loop stalled longer than that), the other nodes may have
    /// retracted this node's devices: it registers again.
    private func beat() {
        guard isReady, let commands else { return }
        commands.evaluate(ClusterScripts.heartbeat, [configuration.node, String(livenessTTL),
                                                     String(loop.clock.now.seconds)]) { [weak self] reply in
            guard let self, !self.isStopped else { return }
            if case .integer(let reaped) = reply, reaped > 0 {
                self.logger.notice("cluster: retracted \(reaped) devices of expired nodes")
            } else if case .integer(-1) = reply, !self.isRegistering {
                self.logger.warning("cluster: the liveness key of node \(self.configuration.node) had expired; registering again")
                self.rejoin(readingSnapshot: false)
            } else if case .error(let message) = reply {
                self.logger.error("cluster: heartbeat failed: \(message)")
            }
        }
        loop.clock.cancel(timer)
        timer = loop.clock.schedule(after: max(1, configuration.nodeTTLMilliseconds / 3)) { [unowned self] in
            self.timer = nil
            self.beat()
        }
    }

    /// The link is down (or an attempt failed): serve alone and retry with capped backoff.
    /// Both connections report their end; the second report of one attempt changes nothing.
    private func lost(_ reason: String) {
        guard !isStopped, commands != nil || subscriber != nil || timer == nil else { return }
        let wasReady = isReady
        isReady = false
        sync.disconnected()
        loop.clock.cancel(timer)
        loop.clock.cancel(connectDeadline)
        timer = nil
        connectDeadline = nil
        let spent = [commands, subscriber]
        commands = nil
        subscriber = nil
        for connection in spent { connection?.onDisconnect = nil; connection?.onConnect = nil }
        // Closing from inside a hiredis callback is not allowed: do it on a later turn.
        loop.deferToLoop { spent.forEach { $0?.close() } }
        let isNewOutage = wasReady || outageStart == nil
        if isNewOutage {
            outageStart = MonotonicTime.now()
            failedAttempts = 0
        } else {
            failedAttempts += 1
        }
        let delay = retryDelay(after: failedAttempts)
        let redis = "Redis at \(configuration.host):\(configuration.port)"
        if isNewOutage {
            logger.warning("cluster: \(redis) unreachable (\(reason)); node \(configuration.node) serving alone, retrying in \(delay) ms, backing off to every \(configuration.maxRetryMilliseconds) ms")
        } else if delay > retryDelay(after: failedAttempts - 1) && delay == configuration.maxRetryMilliseconds {
            logger.warning("cluster: \(redis) still unreachable after \(failedAttempts) attempts (\(reason)); retrying every \(delay) ms")
        }
        timer = loop.clock.schedule(after: delay) { [unowned self] in
            self.timer = nil
            self.connect()
        }
    }

    /// The wait before the next attempt: doubling from the first retry, capped.
    private func retryDelay(after failures: Int) -> Int64 {
        min(configuration.retryMilliseconds << min(max(failures, 0), 16), configuration.maxRetryMilliseconds)
    }

    /// Seconds with one decimal, for a log line.
    private static func seconds(_ value: Double) -> String {
        let tenths = Int((min(value, 1e9) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// A `--cluster` or `--node` value that cannot be used.
public struct ClusterConfigurationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
