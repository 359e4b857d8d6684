import ChatProtocol
import EventLoop

/// A session's way through the server: its socket's arrival, its login, and its end. Who
/// each session is lives in the ``SessionTable`` (`sessions`); its socket and heartbeat
/// timer in `sockets` and `heartbeats`.
extension ChatServer {
    func attach(_ socket: WebSocket, host: String) {
        let id = register(socket, pendingFrom: host)
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
        if !faults.latencies.isEmpty || !faults.slowCloses.isEmpty { refreshPathFaults(id) }
        // The peer's host only: its ephemeral port differs from run to run and would
        // break byte-identical traces.
        trace.record(.open, time: loop.clock.now, connection: id,
                     text: socket.connection.remoteAddress?.host)
        execute(engine.opened(id, now: loop.clock.now))
    }

    /// Labels a connection that has just logged in, for the trace and faults.
    func noteLogin(_ id: ConnectionID) {
        guard sessions.label(id) == nil, let session = engine.session(id), let uid = session.uid else { return }
        sessions.logIn(id, as: (uid, session.deviceId ?? ""))
        if !faults.links.isEmpty { refreshSlicing(id) }
        if !faults.cuts.isEmpty { startCutIfMatching(id) }
        if !faults.latencies.isEmpty || !faults.slowCloses.isEmpty { refreshPathFaults(id) }
        logger.debug("login \(uid) device \(session.deviceId ?? "-") on connection \(id)")
    }

    func socketClosed(_ id: ConnectionID, _ info: WebSocket.CloseInfo) {
        sockets[id] = nil
        sessions.settlePending(id)
        discardHeld(id)
        readingPaused.remove(id)
        silent.sessions[id] = nil
        if !selectedHolds.isEmpty { selectedHolds.removeAll { $0.connection == id } }
        forgetCut(id)
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
        let label = sessions.end(id)
        loop.clock.cancel(heartbeats.removeValue(forKey: id))
        logger.debug("connection \(id) (\(label?.uid ?? "not logged in")) closed with \(code.map(String.init) ?? "no code"): \(note)")
        trace.record(.close, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                     text: "closed: \(note)", code: code)
        execute(engine.closed(id, now: loop.clock.now))
    }

    /// Logs a refusal at a cap at most once per 10 s of clock time, with how many
    /// refusals the period saw.
    func warnAtCap(_ message: @autoclosure () -> String) {
        capRefusals += 1
        let now = loop.clock.now
        if let last = lastCapWarning, now < last.advanced(by: 10_000) { return }
        logger.warning("\(message()) (\(capRefusals) refused since the last warning)")
        lastCapWarning = now
        capRefusals = 0
    }

    func socket(_ id: ConnectionID) -> WebSocket? { sockets[id] }

    /// Every open WebSocket session, stalled ones included.
    var socketIDs: [ConnectionID] { sockets.keys.sorted() }

    /// The uid and device of a logged-in connection: what faults match on.
    func loggedInLabel(_ id: ConnectionID) -> (uid: String, deviceId: String)? { sessions.label(id) }

    /// The uid and device a connection's trace entries carry (a login's claim included).
    func tracedLabel(_ id: ConnectionID) -> (uid: String, deviceId: String)? { sessions.tracedLabel(id) }

    /// Registers a socket under a new connection id (counted as not logged in from `host`).
    func register(_ socket: WebSocket, pendingFrom host: String? = nil) -> ConnectionID {
        let id = sessions.open(pendingFrom: host)
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
        let label = sessions.label(id)
        trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid,
                     deviceId: label?.deviceId, text: "drop: connection reset")
        sockets[id]?.drop(reset: true)
    }
}
