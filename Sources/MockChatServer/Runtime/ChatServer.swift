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
    public internal(set) var engine: PresenceEngine
    /// Faults in force.
    public internal(set) var faults = FaultPlan()
    public var logger = Logger(label: "mockchat.server")
    /// Users and settings restored by a control `reset`.
    let initialDirectory: UserDirectory
    let initialSettings: AppConfiguration

    private var web: WebServer!
    private var sockets: [ConnectionID: WebSocket] = [:]
    /// Connections accepted under the stall fault: open, never read or answered.
    var stalled: Set<ConnectionID> = []
    /// Connections under a silence fault, and upgrades it left unanswered.
    var silent = SilentSessions()
    /// Frames links for chosen frames hold until their rule is removed.
    var selectedHolds: [SelectedHold] = []
    /// Upgrades the `upgrade` fault never answers, reset when it is cleared.
    var unansweredUpgrades: [WebServer.HeldRequest] = []
    /// The connection and op of the request whose replies are being sent: what a
    /// link for chosen replies matches.
    var replying: (connection: ConnectionID, op: String)?
    /// Frames the links hold, per direction.
    var inboundHeld = HeldFrames()
    var outboundHeld = HeldFrames()
    /// Connections not read while their inbound link holds too much.
    var readingPaused: Set<ConnectionID> = []
    private var labels: [ConnectionID: (uid: String, deviceId: String)] = [:]
    /// The uid and device a login frame claimed, for the trace only: a refused login's
    /// reply and close carry them too. Faults never match on a claim.
    private var claims: [ConnectionID: (uid: String, deviceId: String)] = [:]
    private var heartbeats: [ConnectionID: Clock.TimerID] = [:]
    /// The bytes of the pong being written (reused: a pong allocates nothing).
    private var pongBytes: [UInt8] = []
    /// The last pong's time and its text: the clock counts whole milliseconds, and the
    /// pongs of one millisecond share the text.
    private var pongTime: (time: Instant, text: [UInt8])?
    private var nextConnection = 1
    private var isShuttingDown = false
    /// Cluster mode only: the link to Redis.
    let cluster: ClusterBridge?
    /// The web console, when served.
    var console: ConsoleState?
    /// Sessions not yet logged in, per peer host, and the host of each of them.
    private var pendingByHost: [String: Int] = [:]
    private var pendingHost: [ConnectionID: String] = [:]
    /// Refusals at a cap since the last warning, and when that warning was logged.
    private var capRefusals = 0
    private var lastCapWarning: Instant?

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
            // What a silence holds back has not crossed yet.
            SocketCount(port: socket.connection.remoteAddress?.port ?? 0, isOpen: true,
                        sent: silent.sessions[id]?.sentBefore ?? socket.textMessagesSent,
                        received: socket.textMessagesReceived, silent: silent.sessions[id] != nil)
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
        if faults.refuseConnections || isShuttingDown { return .drop }
        if let held = upgradeHeldBySilence() { return held }
        if faults.upgrade != nil, let answer = upgradeFaultRouting() { return answer }
        if faults.stallAfterHandshake {
            return .upgrade { [unowned self] socket in self.attachStalled(socket) }
        }
        let host = peer?.host ?? ""
        guard pendingByHost[host, default: 0] < configuration.maxPendingLoginsPerAddress else {
            warnAtCap("\(host) holds \(configuration.maxPendingLoginsPerAddress) sessions that have not logged in: its new upgrades get 503")
            var busy = HTTPResponse.json(status: 503, body: #"{"error":"too many sessions from this address have not logged in yet"}"#)
            busy.headers.append((name: "Retry-After", value: "1"))
            return .respond(busy)
        }
        return .upgrade { [unowned self] socket in
            self.pendingByHost[host, default: 0] += 1
            self.attach(socket, host: host)
        }
    }

    // MARK: Sessions

    private func attach(_ socket: WebSocket, host: String) {
        let id = register(socket)
        pendingHost[id] = host
        // Replies and events of one loop turn leave in one write per connection.
        socket.connection.coalescesWrites = true
        // The socket drops its callbacks when it finishes, so this one may hold it.
        socket.onText = { [unowned self, socket] bytes in self.receive(bytes, from: id, on: socket) }
        socket.onControlFrame = { [unowned self] in
            guard !self.isBlackholed(id), self.silent.sessions[id] == nil else { return }
            self.engine.activity(id, now: self.loop.clock.now)
        }
        socket.onBinary = { [unowned self] _ in
            guard !self.isBlackholed(id), self.silent.sessions[id] == nil else { return }
            let now = self.loop.clock.now
            self.engine.activity(id, now: now)
            let error = ChatError(.badRequest, "Binary frames are not part of the protocol; send JSON text frames")
            self.execute(self.engine.received(.failure(RequestRejection(id: nil, error: error)), from: id, now: now))
        }
        watchClose(socket, id)
        // The peer's host only: its ephemeral port differs from run to run and would
        // break byte-identical traces.
        trace.record(.open, time: loop.clock.now, connection: id,
                     text: socket.connection.remoteAddress?.host)
        execute(engine.opened(id, now: loop.clock.now))
    }

    private func receive(_ bytes: UnsafeRawBufferPointer, from id: ConnectionID, on socket: WebSocket) {
        let now = loop.clock.now
        let ping = compactPing(bytes)
        if let ping, answeredPing(ping, bytes: bytes, from: id, on: socket, now: now) { return }
        let label = labels[id]
        if isBlackholed(id) {
            trace.record(.fault, time: now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         text: "blackhole: inbound frame discarded")
            return
        }
        if !faults.selectedLinks.isEmpty, receivedThroughSelectedLink(bytes, from: id) { return }
        if !faults.links.isEmpty || !inboundHeld.isEmpty {
            switch passage(.inbound, id, bytes: bytes.count) {
            case .now: break
            case .dropped:
                trace.record(.fault, time: now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                             text: "link in: frame dropped")
                return
            case .at(let time):
                let copy = [UInt8](bytes)
                hold(.inbound, id, until: time, bytes: copy.count) { [weak self] in
                    guard let self, self.sockets[id] != nil else { return }
                    copy.withUnsafeBytes { self.process($0, ping: self.compactPing($0), from: id) }
                }
                return
            }
        }
        process(bytes, ping: ping, from: id)
    }

    /// A frame written exactly as `{"id":N,"op":"ping"}`, decoded without a JSON tree
    /// when nothing needs the tree (no scripted reply to match). Its text is the compact
    /// JSON of its tree, so the trace keeps it as it is.
    private func compactPing(_ bytes: UnsafeRawBufferPointer) -> RequestEnvelope? {
        faults.replies.isEmpty ? RequestDecoder.compactPing(bytes) : nil
    }

    /// Handles one text frame that has crossed the link; `ping` is its ``compactPing(_:)``.
    func process(_ bytes: UnsafeRawBufferPointer, ping: RequestEnvelope?, from id: ConnectionID) {
        if !silent.isEmpty || !faults.silences.isEmpty, heldBySilence(bytes, from: id) { return }
        let now = loop.clock.now
        let label = labels[id]
        engine.activity(id, now: now)
        if ping != nil, trace.isRecording {
            let traced = label ?? claims[id]
            trace.record(.in, time: now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId, frameText: bytes)
        }
        let (decoded, request) = ping.map { (.success($0), nil) } ?? decode(bytes, from: id, label: label, now: now)
        if let request, !faults.replies.isEmpty,
           let reply = faults.takeReply(for: request, uid: label?.uid, deviceId: label?.deviceId) {
            answer(request, with: reply, on: id)
            return
        }
        // The reply leaves when the connection's read is processed, with the replies to
        // the read's other requests; what went to other connections (presence events)
        // waits for the end of the loop turn, to share writes with the turn's other events.
        if !faults.selectedLinks.isEmpty { replying = (id, ping != nil ? "ping" : request?["op"]?.stringValue ?? "") }
        execute(engine.received(decoded, from: id, now: now))
        replying = nil
        noteLogin(id)
    }

    /// The common case of a logged-in client's compact `ping` with no fault, no scripted
    /// reply and nothing held: the pong's bytes go to the socket the callback holds, with
    /// one lookup (the session's, and the label's when traced) and no action, message or
    /// JSON tree. The bytes, effects and trace entries are those of the general path
    /// (the ping's and the pong's text kept as they are); false when the frame must take
    /// that path.
    private func answeredPing(_ ping: RequestEnvelope, bytes: UnsafeRawBufferPointer, from id: ConnectionID, on socket: WebSocket,
                              now: Instant) -> Bool {
        guard faults.blackholes.isEmpty, faults.links.isEmpty, faults.selectedLinks.isEmpty, silent.isEmpty, inboundHeld.isEmpty,
              outboundHeld.isEmpty, case .integer(let requestID) = ping.id else { return false }
        let tracing = trace.isRecording
        let label = tracing ? labels[id] : nil
        guard !tracing || label != nil, engine.pinged(id, now: now) else { return false }
        if let label {
            trace.record(.in, time: now, connection: id, uid: label.uid, deviceId: label.deviceId, frameText: bytes)
        }
        let timeText: [UInt8]
        if let pongTime, pongTime.time == now {
            timeText = pongTime.text
        } else {
            timeText = ServerMessage.serverTimeText(now.seconds)
            pongTime = (now, timeText)
        }
        pongBytes.removeAll(keepingCapacity: true)
        ServerMessage.writePong(id: requestID, serverTimeText: timeText, into: &pongBytes)
        if let label {
            pongBytes.withUnsafeBytes { pong in
                trace.record(.out, time: now, connection: id, uid: label.uid, deviceId: label.deviceId, frameText: pong)
            }
        }
        socket.send(text: pongBytes)
        checkBackPressure(id, socket)
        return true
    }

    /// Labels a connection that has just logged in, for the trace and faults.
    private func noteLogin(_ id: ConnectionID) {
        guard labels[id] == nil, let session = engine.session(id), let uid = session.uid else { return }
        labels[id] = (uid, session.deviceId ?? "")
        settlePending(id)
        if !faults.links.isEmpty { refreshSlicing(id) }
        logger.debug("login \(uid) device \(session.deviceId ?? "-") on connection \(id)")
    }

    /// Parses and decodes one text frame, tracing it as it arrived.
    /// The parsed frame comes back too when there are scripted replies to match.
    private func decode(_ bytes: UnsafeRawBufferPointer, from id: ConnectionID, label: (uid: String, deviceId: String)?,
                        now: Instant) -> (Result<RequestEnvelope, RequestRejection>, JSONValue?) {
        do {
            let value = try JSONParser.parse(bytes)
            var label = label ?? claims[id]
            if label == nil, value["op"]?.stringValue == "login", let device = value["deviceId"]?.stringValue {
                label = (value["uid"]?.stringValue ?? "", device)
                claims[id] = label
            }
            trace.record(.in, time: now, connection: id, uid: label?.uid, deviceId: label?.deviceId, frame: value)
            return (RequestDecoder.decode(value), value)
        } catch {
            trace.record(.in, time: now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         text: String(decoding: bytes.prefix(1024), as: UTF8.self))
            return (.failure(RequestRejection(id: nil, error: ChatError(.badRequest, "Not valid JSON: \(error)"))), nil)
        }
    }

    private func socketClosed(_ id: ConnectionID, _ info: WebSocket.CloseInfo) {
        sockets[id] = nil
        settlePending(id)
        discardHeld(id)
        readingPaused.remove(id)
        silent.sessions[id] = nil
        if !selectedHolds.isEmpty { selectedHolds.removeAll { $0.connection == id } }
        if stalled.remove(id) != nil || silent.abandoned.remove(id) != nil {
            trace.record(.close, time: loop.clock.now, connection: id, text: "closed: \(info.abnormal ?? "closing handshake complete")",
                         code: info.received ?? info.sent)
            return
        }
        sessionEnded(id, note: info.abnormal ?? "closing handshake complete", code: info.received ?? info.sent)
    }

    /// The session on connection `id` is over (its socket closed, or the server gave up on
    /// a silent one): traced, and the engine told.
    func sessionEnded(_ id: ConnectionID, note: String, code: UInt16?) {
        let label = labels.removeValue(forKey: id) ?? claims[id]
        claims[id] = nil
        settlePending(id)
        loop.clock.cancel(heartbeats.removeValue(forKey: id))
        logger.debug("connection \(id) (\(label?.uid ?? "not logged in")) closed with \(code.map(String.init) ?? "no code"): \(note)")
        trace.record(.close, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                     text: "closed: \(note)", code: code)
        execute(engine.closed(id, now: loop.clock.now))
    }

    /// Carries out the engine's actions in order.
    func execute(_ actions: [EngineAction]) {
        for action in actions {
            switch action {
            case .send(let recipients, let message):
                // Encoded once; the same bytes go to every recipient.
                let frame = message.json
                var bytes: [UInt8] = []
                bytes.reserveCapacity(256)
                frame.serialize(into: &bytes)
                let tracing = trace.isRecording
                let tracedText = tracing ? trace.keptText(of: frame, serialized: bytes) : []
                let plain = faults.blackholes.isEmpty && faults.links.isEmpty && faults.selectedLinks.isEmpty
                    && outboundHeld.isEmpty
                for id in recipients {
                    if plain && !tracing {
                        // No fault and no trace: nothing to look up but the socket.
                        if let socket = sockets[id] {
                            socket.send(text: bytes)
                            checkBackPressure(id, socket)
                        }
                        continue
                    }
                    let label = labels[id] ?? engine.session(id).flatMap { s in s.uid.map { ($0, s.deviceId ?? "") } }
                    if faults.isBlackholed(uid: label?.0, deviceId: label?.1) {
                        trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.0, deviceId: label?.1,
                                     frame: frame, text: "blackhole: outbound frame discarded")
                        continue
                    }
                    let traced = label ?? claims[id]
                    if plain, let socket = sockets[id] {
                        tracedText.withUnsafeBytes { text in
                            trace.record(.out, time: loop.clock.now, connection: id, uid: traced?.0, deviceId: traced?.1, frameText: text)
                        }
                        socket.send(text: bytes)
                        checkBackPressure(id, socket)
                        continue
                    }
                    send(frame, bytes: bytes, to: id)
                }
            case .close(let id, let code, let reason):
                carryOutClose(id, code: code, reason: reason)
            case .claimDevice(let device, let claim):
                cluster?.claim(device, claim) { [unowned self] granted in
                    guard claim.refusesToKick, let id = ConnectionID(device.connection) else { return }
                    self.execute(self.engine.clusterClaimAnswered(id, granted: granted, now: self.loop.clock.now))
                    self.noteLogin(id)
                }
            case .retractDevice(let device, let lastActiveAt, let close):
                // The close waits until Redis has removed the device (docs/CLUSTER.md).
                cluster?.retract(device, lastActiveAt: lastActiveAt) { [weak self] in
                    if let close { self?.carryOutClose(close.connection, code: close.code, reason: close.reason) }
                }
            case .scheduleHeartbeat(let id, let deadline):
                loop.clock.cancel(heartbeats[id])
                heartbeats[id] = loop.clock.schedule(at: deadline) { [unowned self] in
                    self.heartbeats[id] = nil
                    let now = self.loop.clock.now
                    // Input the kernel already holds arrived before this check: after a
                    // stall of the loop it would otherwise be read only after the close.
                    if let socket = self.sockets[id], !self.isBlackholed(id), self.silent.sessions[id] == nil,
                       socket.connection.unreadKernelBytes > 0 {
                        self.engine.activity(id, now: now)
                    }
                    self.execute(self.engine.heartbeatDue(id, now: now))
                }
            }
        }
    }

    /// Closes a connection with `code`, as the engine asked: traced, logged, and sent
    /// through the connection's outbound link (which may withhold the close frame).
    private func carryOutClose(_ id: ConnectionID, code: CloseCode, reason: String) {
        let label = labels[id] ?? claims[id]
        trace.record(.close, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                     text: "server closes: \(reason)", code: code.rawValue)
        logger.debug("closing connection \(id) (\(label?.uid ?? "not logged in")) with \(code.rawValue): \(reason)")
        if silent.sessions[id] != nil {
            closeSilently(id, code: code.rawValue)
        } else if isBlackholed(id) {
            sockets[id]?.drop(reset: false)  // the close frame would be lost anyway
        } else {
            close(id, code: code.rawValue, reason: reason)
        }
    }

    /// The session logged in or ended: it no longer counts against its address.
    private func settlePending(_ id: ConnectionID) {
        guard let host = pendingHost.removeValue(forKey: id) else { return }
        pendingByHost[host, default: 1] -= 1
        if pendingByHost[host] == 0 { pendingByHost[host] = nil }
    }

    /// Logs a refusal at a cap at most once per 10 s of clock time, with how many
    /// refusals the period saw.
    private func warnAtCap(_ message: @autoclosure () -> String) {
        capRefusals += 1
        let now = loop.clock.now
        if let last = lastCapWarning, now < last.advanced(by: 10_000) { return }
        logger.warning("\(message()) (\(capRefusals) refused since the last warning)")
        lastCapWarning = now
        capRefusals = 0
    }

    private func isBlackholed(_ id: ConnectionID) -> Bool {
        guard !faults.blackholes.isEmpty else { return false }
        let label = labels[id]
        return faults.isBlackholed(uid: label?.uid, deviceId: label?.deviceId)
    }

    /// Sends one text frame through the connection's outbound link, tracing it as
    /// queued (its JSON, or else its `text`), or as dropped by the link.
    func send(_ frame: JSONValue?, text: String? = nil, bytes: [UInt8], to id: ConnectionID) {
        if !faults.selectedLinks.isEmpty, sentThroughSelectedLink(frame, bytes: bytes, to: id) { return }
        let traced = labels[id] ?? claims[id]
        let way = sockets[id] == nil ? .now : passage(.outbound, id, bytes: bytes.count)
        guard way != .dropped else {
            trace.record(.fault, time: loop.clock.now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId,
                         frame: frame, text: "link out: frame dropped")
            return
        }
        trace.record(.out, time: loop.clock.now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId, frame: frame,
                     text: text)
        carry(way, to: id, bytes: bytes.count) { socket in
            socket.send(text: bytes)
            self.checkBackPressure(id, socket)
        }
        // A held frame counts in the connection's unsent bytes from now on.
        if case .at = way, let socket = sockets[id] { checkBackPressure(id, socket) }
    }

    /// Runs `work` on the connection's socket when its outbound link lets it through,
    /// never dropping it (closes, raw bytes). A blackholed connection gets nothing.
    func deliver(to id: ConnectionID, _ work: @escaping (WebSocket) -> Void) {
        guard sockets[id] != nil else { return }
        carry(passage(.outbound, id, bytes: 0, droppable: false), to: id, bytes: 0, work)
    }

    private func carry(_ way: LinkPassage, to id: ConnectionID, bytes: Int, _ work: @escaping (WebSocket) -> Void) {
        guard !isBlackholed(id) else { return }
        switch way {
        case .now, .dropped: sockets[id].map(work)
        case .at(let time): hold(.outbound, id, until: time, bytes: bytes) { [weak self] in self?.sockets[id].map(work) }
        }
    }

    /// Closes with 4008 a connection whose unsent bytes (queued in the socket, or held
    /// by its outbound link) exceed the limit.
    private func checkBackPressure(_ id: ConnectionID, _ socket: WebSocket) {
        let queued = socket.connection.queuedWriteBytes
        let held = outboundHeld.bytes(of: id)
        guard queued + held > configuration.outboundQueueLimit, !socket.isClosing else { return }
        logger.warning("closing slow consumer \(id): \(queued) bytes queued, \(held) held by its link")
        if held > 0 {
            // The link's backlog is dropped, so the close leaves after the link's delay
            // rather than behind it.
            let frames = removeHeld(.outbound, id)
            let traced = tracedLabel(id)
            trace.record(.fault, time: loop.clock.now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId,
                         text: "link out: \(frames.count) held frames (\(held) bytes) dropped, slow consumer")
        }
        // The close frame queues behind the socket's backlog; the close deadline cuts
        // the stream if the client never reads it.
        execute(engine.disconnect(id, code: .slowConsumer, reason: "outbound queue overflow", now: loop.clock.now))
    }

    // MARK: Used by the control API

    func socket(_ id: ConnectionID) -> WebSocket? { sockets[id] }

    /// Every open WebSocket session, stalled ones included.
    var socketIDs: [ConnectionID] { sockets.keys.sorted() }

    /// The uid and device of a logged-in connection: what faults match on.
    func loggedInLabel(_ id: ConnectionID) -> (uid: String, deviceId: String)? { labels[id] }

    /// The uid and device a connection's trace entries carry (a login's claim included).
    func tracedLabel(_ id: ConnectionID) -> (uid: String, deviceId: String)? { labels[id] ?? claims[id] }

    /// Registers a socket under a new connection id.
    func register(_ socket: WebSocket) -> ConnectionID {
        let id = ConnectionID(nextConnection)
        nextConnection += 1
        sockets[id] = socket
        return id
    }

    /// Sets what happens when a socket closes.
    func watchClose(_ socket: WebSocket, _ id: ConnectionID) {
        socket.onClosed = { [unowned self] info in self.socketClosed(id, info) }
    }

    func connections(matching selector: FaultPlan.Selector) -> [ConnectionID] {
        engine.connections.filter { selector.matches(uid: $0.uid, deviceId: $0.deviceId) }.map(\.id)
    }

    /// Cuts a connection off without a close frame, as a lost network would.
    func drop(_ id: ConnectionID) {
        trace.record(.fault, time: loop.clock.now, connection: id, uid: labels[id]?.uid,
                     deviceId: labels[id]?.deviceId, text: "drop: connection reset")
        sockets[id]?.drop(reset: true)
    }
}
