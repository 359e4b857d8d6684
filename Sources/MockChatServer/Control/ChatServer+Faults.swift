import ChatProtocol
import EventLoop

/// `POST /control/faults`: the standing faults (docs/PROTOCOL.md, 12.7), and what the
/// server does for the stall and scripted-reply faults.
extension ChatServer {
    func applyFault(_ body: JSONValue) throws(ControlError) -> JSONValue {
        let request = try FaultRequest(body)
        let selector = request.selector
        let enabled = request.enabled
        var affected = connections(matching: selector).count
        switch request.change {
        case .drop(let connection):
            var targets = connections(matching: selector)
            if let text = connection {
                guard let id = ConnectionID(text), socket(id) != nil else { throw ControlError(404, "no connection '\(text)'") }
                targets = [id]
            }
            targets.forEach(drop)
            affected = targets.count
        case .blackhole:
            faults.blackholes.removeAll { $0 == selector }
            if enabled { faults.blackholes.append(selector) }
        case .refuseConnections:
            faults.refuseConnections = enabled
            affected = 0
        case .stall:
            faults.stallAfterHandshake = enabled
            affected = 0
        case .link(let directions, let shape):
            for direction in directions { faults.setLink(selector, direction, shape) }
            refreshSlicing()
            releaseHeldFrames()
        case .cut(let rule):
            affected = setCut(rule, enabled: enabled)
        case .upgrade(let fault) where selector.isEmpty:
            setUpgradeFault(fault)
            affected = 0
        case .upgrade(let fault):
            setLoginUpgrade(fault, for: selector)
            affected = 0
        case .latency(let ms):
            setLatency(ms, for: selector)
        case .slowClose(let delays):
            setSlowClose(delays, for: selector)
        case .selectedLink(let rule):
            faults.setSelectedLink(rule, enabled: enabled)
            releaseSelectedHolds(of: rule)
        case .silence(let silence):
            affected = try setSilence(silence, enabled: enabled)
        case .reply(let op, let reply):
            if let reply {
                faults.replies.append(reply)
            } else {
                faults.replies.removeAll { $0.op == op && $0.selector == selector }
            }
        }
        trace.record(.control, time: loop.clock.now, uid: selector.uid, deviceId: selector.deviceId, frame: request.recorded,
                     text: "fault \(request.name) \(enabled ? "on" : "off")")
        logger.debug("fault \(request.name) \(enabled ? "on" : "off") uid=\(selector.uid ?? "-") device=\(selector.deviceId ?? "-"), \(affected) affected")
        return ["ok": true, "affected": .integer(Int64(affected))]
    }

    /// Every fault removed; what links hold leaves at once, in order.
    func clearFaults() {
        let silences = faults.silences
        faults = FaultPlan()
        silences.forEach(liftSilence)
        releaseSelectedHolds(of: nil)
        resetUnansweredUpgrades()
        releaseLatencyHeldUpgrades()
        refreshPathFaults()
        cutting.keys.forEach(forgetCut)
        refreshSlicing()
        releaseHeldFrames()
    }

    /// A WebSocket upgraded under the stall fault: it is kept open and read, but its
    /// frames go nowhere and nothing is ever written to it, not even a pong.
    func attachStalled(_ socket: WebSocket) {
        let id = register(socket)
        stalled.insert(id)
        socket.stopWriting()
        socket.onText = { [unowned self] bytes in
            let frame = try? JSONParser.parse(bytes)
            let raw = frame == nil ? ": " + String(decoding: bytes.prefix(1024), as: UTF8.self) : ""
            self.trace.record(.fault, time: self.loop.clock.now, connection: id, frame: frame,
                              text: "stall: inbound frame ignored" + raw)
        }
        watchClose(socket, id)
        trace.record(.open, time: loop.clock.now, connection: id, text: socket.connection.remoteAddress?.host)
        trace.record(.fault, time: loop.clock.now, connection: id, text: "stall: upgrade accepted, nothing will be read or answered")
    }

    /// Ends every stalled connection (reset, shutdown): no close frame, as a hung server's would.
    func endStalled() {
        for id in stalled.sorted() { socket(id)?.drop(reset: false) }
    }

    /// Answers a request with a scripted reply instead of the engine, after its delay.
    func answer(_ request: JSONValue, with reply: ScriptedReply, on id: ConnectionID) {
        let frame = reply.frame(answering: request)
        let label = tracedLabel(id)
        trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                     text: "reply: scripted \(reply.answer.key) for \(reply.op)" + (reply.delayMs > 0 ? " in \(reply.delayMs) ms" : ""))
        var bytes: [UInt8] = []
        frame.serialize(into: &bytes)
        guard reply.delayMs > 0 else {
            send(frame, bytes: bytes, to: id)
            return
        }
        loop.clock.schedule(after: reply.delayMs) { [weak self] in
            guard let self, self.socket(id) != nil else { return }
            self.send(frame, bytes: bytes, to: id)
        }
    }
}
