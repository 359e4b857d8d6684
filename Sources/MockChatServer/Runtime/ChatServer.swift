import ChatProtocol
import EventLoop
import Logging

/// The mock chat server: WebSocket sessions and the control API on one port, with the
/// ``PresenceEngine`` deciding and this class carrying out its actions.
///
/// Everything runs on the loop's thread. Transport concerns live here (the trace,
/// injected faults, slow consumers, shutdown); presence and device rules live in the
/// engine.
public final class ChatServer {
    /// How to run.
    public struct Configuration: Sendable {
        public var address = SocketAddress(host: "127.0.0.1", port: 8080)
        public var web = WebServer.Configuration()
        /// Who may use the control API (peer, token, Host, Origin, Content-Type).
        public var controlAccess = ControlAccess()
        /// A connection whose unsent output exceeds this many bytes is closed with 4008.
        public var outboundQueueLimit = 1 << 20
        /// Share presence and devices with other nodes through Redis (docs/CLUSTER.md).
        public var cluster: ClusterBridge.Configuration?
        /// WebSocket sessions from one address that have not logged in yet, beyond which
        /// that address's new upgrades get 503 (the login deadline frees them).
        public var maxPendingLoginsPerAddress = 4_096
        /// Serve the web console at `/console` (docs/CONSOLE.md).
        public var console = false
        public init() {}
    }

    public let loop: EventLoop
    public let configuration: Configuration
    public let trace: TraceLog
    @exclusivity(unchecked) public internal(set) var engine: PresenceEngine
    /// Faults in force.
    @exclusivity(unchecked) public internal(set) var faults = FaultPlan()
    public var logger = Logger(label: "mockchat.server")
    /// Users and settings restored by a control `reset`.
    let initialDirectory: UserDirectory
    let initialSettings: AppConfiguration

    private var web: WebServer!
    var sockets: [ConnectionID: WebSocket] = [:]
    /// Connections accepted under the stall fault: open, never read or answered.
    var stalled: Set<ConnectionID> = []
    /// Connections under a silence fault, and upgrades it left unanswered.
    @exclusivity(unchecked) var silent = SilentSessions()
    /// Frames links for chosen frames hold until their rule is removed.
    var selectedHolds: [SelectedHold] = []
    /// Upgrades the `upgrade` fault never answers, reset when it is cleared.
    var unansweredUpgrades: [WebServer.HeldRequest] = []
    /// Upgrade requests a latency of every connection holds until they arrive.
    var latencyHeldUpgrades: [Int: (timer: Clock.TimerID, request: WebServer.HeldRequest)] = [:]
    var nextLatencyHold = 0
    /// True while such a request is routed on its arrival.
    var isRoutingAfterLatency = false
    /// Connections a `cut` fault counts for.
    @exclusivity(unchecked) var cutting: [ConnectionID: CutProgress] = [:]
    /// The connection and op of the request whose replies are being sent: what a
    /// link for chosen replies matches.
    @exclusivity(unchecked) var replying: (connection: ConnectionID, op: String)?
    /// Frames the links hold, per direction.
    @exclusivity(unchecked) var inboundHeld = HeldFrames()
    @exclusivity(unchecked) var outboundHeld = HeldFrames()
    /// Connections not read while their inbound link holds too much.
    var readingPaused: Set<ConnectionID> = []
    /// Who each session is, and the sessions not logged in yet per address.
    @exclusivity(unchecked) var sessions = SessionTable()
    var heartbeats: [ConnectionID: Clock.TimerID] = [:]
    /// The bytes of the pong being written (reused: a pong allocates nothing).
    @exclusivity(unchecked) var pongBytes: [UInt8] = []
    /// The last pong's time and its text: the clock counts whole milliseconds, and the
    /// pongs of one millisecond share the text.
    @exclusivity(unchecked) var pongTime: (time: Instant, text: [UInt8])?
    private var isShuttingDown = false
    /// Cluster mode only: the link to Redis.
    let cluster: ClusterBridge?
    /// The web console, when served.
    var console: ConsoleState?
    /// Refusals at a cap since the last warning, and when that warning was logged.
    var capRefusals = 0
    var lastCapWarning: Instant?

    /// Starts listening at `configuration.address`.
    public init(loop: EventLoop, configuration: Configuration = .init(), directory: UserDirectory,
                settings: AppConfiguration, trace: TraceLog? = nil) throws {
        self.loop = loop
        self.configuration = configuration
        self.trace = try trace ?? TraceLog()
        engine = PresenceEngine(directory: directory, settings: settings, now: loop.clock.now)
        initialDirectory = directory
        initialSettings = settings
        self.trace.writeHeader(["mockchat": ["version": .string(BuildInfo.version), "commit": .string(BuildInfo.commit)],
                                "clock": .string(loop.clock.isVirtual ? "virtual" : "system"),
                                "start": .double(loop.clock.now.seconds),
                                "fixtures": ["users": directory.json["users"] ?? .array([]), "app": settings.json]])
        console = configuration.console ? ConsoleState(loop: loop, trace: self.trace) : nil
        cluster = configuration.cluster.map { ClusterBridge(loop: loop, configuration: $0, logger: Logger(label: "mockchat.cluster")) }
        web = try WebServer(loop: loop, address: configuration.address, configuration: configuration.web) {
            [unowned self] request, isUpgrade, peer in
            self.route(request, isUpgrade: isUpgrade, peer: peer)
        }
        web.onCapacityRefusal = { [unowned self] in
            self.warnAtCap("at the connection cap (\(self.configuration.web.maxConnections)): new WebSocket upgrades get 503")
        }
        if let cluster {
            engine.joinCluster(node: cluster.configuration.node)
            cluster.onEvent = { [unowned self] event in self.clusterEvent(event) }
            cluster.onSnapshot = { [unowned self] devices in
                self.execute(self.engine.clusterSnapshot(devices, now: self.loop.clock.now))
            }
            cluster.localDevices = { [unowned self] in self.engine.localClusterDevices }
            cluster.start()
        }
    }

    /// The console's per-process token (nil without a console): what the page sends
    /// as `X-Console-Token`.
    public var consoleToken: String? { console?.token }

    /// How "save as scenario" turns a trace file's text into a scenario: `scenarios
    /// from-trace`, which lives above this module.
    public func setScenarioMaker(_ maker: @escaping (_ traceText: String, _ name: String) -> Result<ConsoleScenario, ScenarioMakingError>) {
        console?.scenarioMaker = maker
    }

    /// The bound address (the real port when 0 was asked for).
    public var address: SocketAddress { web.address }

    /// Open WebSocket sessions.
    public var sessionCount: Int { sockets.count }

    /// Every WebSocket session: the client's port and the text messages the server sent
    /// and received on it.
    public var sessionCounts: [SocketCount] {
        sockets.map { id, socket in
            // What a silence holds back has not crossed yet, nor what a latency holds.
            SocketCount(port: socket.connection.remoteAddress?.port ?? 0, isOpen: true,
                        sent: silent.sessions[id]?.sentBefore ?? socket.textMessagesCrossed(),
                        received: socket.textMessagesReceived, silent: silent.sessions[id] != nil,
                        receiving: socket.connection.holdsDelayedInput)
        }.sorted { $0.port < $1.port } + heldUpgradeCounts
    }

    /// The upgrades the server holds unanswered, by the client's port. One whose client
    /// has given up is left out: its port may already belong to another socket of the
    /// client's, which a held entry would otherwise stand for.
    private var heldUpgradeCounts: [SocketCount] {
        (unansweredUpgrades + silent.heldUpgrades.map(\.request)).filter { !$0.peerGone() }.map { held in
            SocketCount(port: held.peerPort, isOpen: false, sent: 0, received: 0, held: true)
        }.sorted { $0.port < $1.port }
    }

    /// Connections in any stage, including HTTP requests in progress.
    public var openConnectionCount: Int { web.openConnections }

    /// Whether the Redis connections (cluster mode) still hold loop handles.
    public var isClusterLinkOpen: Bool { cluster?.isOpen == true }

    /// Closes the Redis connections at once; call before ``EventLoop/shutdown()`` if
    /// ``isClusterLinkOpen`` is still true.
    public func closeClusterLink() { cluster?.forceClose() }

    /// Stops accepting and closes every WebSocket with 1001. The loop finishes the
    /// closing handshakes; call ``EventLoop/shutdown()`` afterwards.
    public func shutdown() {
        guard !isShuttingDown else { return }
        isShuttingDown = true
        web.stopListening()
        for id in sockets.keys.sorted() {
            execute(engine.disconnect(id, code: .goingAway, reason: "server shutting down", now: loop.clock.now))
        }
        endStalled()
        console?.streams.closeAll()
        // The retractions just sent still reach Redis: the other nodes see these users leave now.
        cluster?.stop()
    }

    private func clusterEvent(_ event: ClusterEvent) {
        let now = loop.clock.now
        switch event {
        case .added(let device):
            execute(engine.clusterDeviceAdded(device, now: now))
        case .removed(let uid, let field, let lastActiveAt):
            execute(engine.clusterDeviceRemoved(uid: uid, field: field, lastActiveAt: lastActiveAt, now: now))
        case .kick(let node, let connection, let reason, let byDeviceId, let byPlatform):
            guard node == cluster?.configuration.node, let id = ConnectionID(connection) else { return }
            execute(engine.kick(id, reason: reason, byDeviceId: byDeviceId, byPlatform: byPlatform, now: now))
        case .reset(let node):
            guard node != cluster?.configuration.node else { return }
            resetLocally()
        }
    }

    // MARK: Routing

    private func route(_ request: HTTPRequest, isUpgrade: Bool, peer: SocketAddress?) -> WebServer.Routing {
        if let routing = consoleRouting(request, peer: peer) { return routing }
        if request.path.hasPrefix("/control/") || request.path == "/control" {
            if let refusal = configuration.controlAccess.refusal(for: request, peer: peer,
                                                                 listeningHost: configuration.address.host) {
                return .respond(refusal)
            }
            return .respond(control(request))
        }
        guard request.path == "/v1/ws" else {
            return .respond(.json(status: 404, body: #"{"error":"unknown path; the WebSocket endpoint is /v1/ws"}"#))
        }
        guard isUpgrade else {
            return .respond(.json(status: 426, body: #"{"error":"/v1/ws only speaks WebSocket"}"#))
        }
        if !faults.latencies.isEmpty, let held = upgradeDelayedByLatency() { return held }
        if faults.refuseConnections || isShuttingDown { return .drop }
        if let held = upgradeHeldBySilence() { return held }
        if faults.upgrade != nil, let answer = upgradeFaultRouting() { return answer }
        if faults.stallAfterHandshake {
            return .upgrade { [unowned self] socket in self.attachStalled(socket) }
        }
        let host = peer?.host ?? ""
        guard sessions.pendingCount(from: host) < configuration.maxPendingLoginsPerAddress else {
            warnAtCap("\(host) holds \(configuration.maxPendingLoginsPerAddress) sessions that have not logged in: its new upgrades get 503")
            var busy = HTTPResponse.json(status: 503, body: #"{"error":"too many sessions from this address have not logged in yet"}"#)
            busy.headers.append((name: "Retry-After", value: "1"))
            return .respond(busy)
        }
        return .upgrade { [unowned self] socket in self.attach(socket, host: host) }
    }
}
