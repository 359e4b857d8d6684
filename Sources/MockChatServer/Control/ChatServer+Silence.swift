import ChatProtocol
import EventLoop

/// Connections under a silence fault (docs/PROTOCOL.md, 12.7, "Silence").
struct SilentSessions {
    struct Session {
        /// The silence that holds it.
        var rule: FaultPlan.Silence
        /// Text messages sent before the silence: what the client can have received.
        var sentBefore: Int
        /// Text frames that arrived meanwhile, processed in order when the silence lifts.
        var backlog: [[UInt8]] = []
        /// The close the server decided meanwhile (not delivered): the connection is
        /// reset when the silence lifts.
        var closedWith: UInt16?
    }

    var sessions: [ConnectionID: Session] = [:]
    /// Connections reset when their silence lifted, after the server had given up on
    /// them: their end is traced, the engine already knows.
    var abandoned: Set<ConnectionID> = []
    /// Upgrades a silence of every connection left unanswered.
    var heldUpgrades: [(rule: FaultPlan.Silence, request: WebServer.HeldRequest)] = []

    var isEmpty: Bool { sessions.isEmpty }
}

extension ChatServer {
    /// Sets (or lifts) a silence; the number of connections it silenced.
    func setSilence(_ rule: FaultPlan.Silence, enabled: Bool) throws(ControlError) -> Int {
        var targets: [ConnectionID]
        if let text = rule.connection {
            guard let id = ConnectionID(text), socket(id) != nil else { throw ControlError(404, "no connection '\(text)'") }
            targets = [id]
        } else if rule.isEverybody {
            targets = socketIDs.filter { !stalled.contains($0) }
        } else {
            targets = connections(matching: rule.selector)
        }
        faults.silences.removeAll { $0.sameTargets(rule) }
        guard enabled else {
            let lifted = silent.sessions.values.filter { $0.rule.sameTargets(rule) }.count
            liftSilence(rule)
            return lifted
        }
        faults.silences.append(rule)
        for (id, session) in silent.sessions where session.rule.sameTargets(rule) { silent.sessions[id]?.rule = rule }
        targets = targets.filter { silent.sessions[$0] == nil }
        for id in targets { silence(id, under: rule) }
        return targets.count
    }

    /// Silences the one connection `id` as a fault of the server's own decides (a cut
    /// ending in silence, a login held by a per-device upgrade fault).
    func silenceConnection(_ id: ConnectionID) {
        _ = try? setSilence(FaultPlan.Silence(selector: .init(), connection: id.description, hangsNewConnections: false),
                            enabled: true)
    }

    /// Lifts a silence: each of its connections gets what the client sent meanwhile, in
    /// order, then what the server sent, then the client's close or end of stream, if
    /// any; a connection the server gave up on meanwhile is reset. Held upgrades are
    /// answered.
    func liftSilence(_ rule: FaultPlan.Silence) {
        for id in silent.sessions.keys.sorted() where silent.sessions[id]?.rule.sameTargets(rule) == true {
            lift(id)
        }
        let upgrades = silent.heldUpgrades.filter { $0.rule.sameTargets(rule) }
        silent.heldUpgrades.removeAll { $0.rule.sameTargets(rule) }
        if !upgrades.isEmpty {
            trace.record(.fault, time: loop.clock.now, text: "silence lifted: \(upgrades.count) held upgrade(s) answered")
        }
        for upgrade in upgrades { upgrade.request.reroute() }
    }

    /// The routing of a new upgrade while every connection is silent and new attempts
    /// hang; nil when it goes through.
    func upgradeHeldBySilence() -> WebServer.Routing? {
        guard let rule = faults.silences.last(where: \.isEverybody), rule.hangsNewConnections else { return nil }
        return .hold { [unowned self] request in
            self.silent.heldUpgrades.append((rule, request))
            self.trace.record(.fault, time: self.loop.clock.now, text: "silence: upgrade held, not answered until the silence lifts")
        }
    }

    /// Whether a text frame is held back by a silence: the connection's own, or, for a
    /// login whose `uid` and `deviceId` a silence that hangs new connections matches,
    /// one that starts now.
    func heldBySilence(_ frame: inout InboundFrame, from id: ConnectionID) -> Bool {
        if silent.sessions[id] == nil {
            guard loggedInLabel(id) == nil,
                  faults.silences.contains(where: { $0.hangsNewConnections && !$0.selector.isEmpty }),
                  let login = frame.login(),
                  let rule = faults.silences.last(where: { rule in
                      rule.hangsNewConnections && !rule.selector.isEmpty
                          && rule.selector.matches(uid: login["uid"]?.stringValue, deviceId: login["deviceId"]?.stringValue)
                  }) else { return false }
            silence(id, under: rule)
        }
        silent.sessions[id]?.backlog.append([UInt8](frame.bytes))
        let label = tracedLabel(id)
        trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                     frame: trace.isRecording ? try? frame.json() : nil, text: "silence: inbound frame held")
        return true
    }

    /// The server closes a silent connection: the session ends now, the close is not
    /// delivered, and the connection is reset when the silence lifts.
    func closeSilently(_ id: ConnectionID, code: UInt16) {
        guard silent.sessions[id]?.closedWith == nil else { return }
        silent.sessions[id]?.closedWith = code
        let label = tracedLabel(id)
        trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                     text: "silence: close \(code) not delivered")
        sessionEnded(id, note: "silent, close \(code) not delivered", code: code)
    }

    private func silence(_ id: ConnectionID, under rule: FaultPlan.Silence) {
        guard let socket = socket(id), silent.sessions[id] == nil, !stalled.contains(id) else { return }
        socket.silence()
        silent.sessions[id] = SilentSessions.Session(rule: rule, sentBefore: socket.textMessagesSent)
        let label = tracedLabel(id)
        trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                     text: "silence: nothing crosses from now on")
    }

    private func lift(_ id: ConnectionID) {
        guard let session = silent.sessions.removeValue(forKey: id), let socket = socket(id) else { return }
        let label = tracedLabel(id)
        if let code = session.closedWith {
            trace.record(.fault, time: loop.clock.now, connection: id,
                         text: "silence lifted: the server had closed it (\(code)), connection reset")
            silent.abandoned.insert(id)
            socket.endSilence(release: false)
            socket.drop(reset: true)
            return
        }
        trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                     text: "silence lifted: \(session.backlog.count) held frame(s) arrive")
        for frame in session.backlog where self.socket(id) != nil {
            frame.withUnsafeBytes { process($0, ping: nil, from: id) }
        }
        // Then the client's close, if it came, after the answers to what it sent before it.
        socket.endSilence(release: true)
    }
}
