import ChatProtocol
import EventLoop

/// One text frame's way in: through the connection's link gate, then to the engine. A
/// compact `ping` of a logged-in session is answered at the head of the general path
/// (``ChatServer/answeredPing(_:bytes:from:on:now:)``), with the same bytes and trace.
extension ChatServer {
    /// One text frame from `socket`: through the connection's inbound link gate, then
    /// processed (or held by the link, and processed when it lets the frame through).
    func receive(_ bytes: UnsafeRawBufferPointer, from id: ConnectionID, on socket: WebSocket) {
        let ping = compactPing(bytes)
        let quiet = ping != nil && quietForPing
        guard quiet || passesInboundGate(bytes, from: id) else { return }
        if !cutting.isEmpty { countForCut(bytes.count, on: id) }
        process(bytes, ping: ping, from: id, on: quiet ? socket : nil)
    }

    /// The id `N` of a frame written exactly as `{"id":N,"op":"ping"}`, decoded without a
    /// JSON tree when nothing needs the tree (no scripted reply to match). Its text is
    /// the compact JSON of its tree, so the trace keeps it as it is.
    func compactPing(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        faults.replies.isEmpty ? RequestDecoder.compactPingID(bytes) : nil
    }

    /// Handles one text frame that has crossed the link; `ping` is its ``compactPing(_:)`` id,
    /// and `socket` the connection's when the frame comes straight from it while
    /// ``quietForPing``. A logged-in session's compact ping is then answered first.
    func process(_ bytes: UnsafeRawBufferPointer, ping: Int64?, from id: ConnectionID, on socket: WebSocket? = nil) {
        if let ping, let socket, answeredPing(ping, bytes: bytes, from: id, on: socket, now: loop.clock.now) {
            return
        }
        var frame = InboundFrame(bytes)
        if !silent.isEmpty || !faults.silences.isEmpty, heldBySilence(&frame, from: id) { return }
        if !faults.loginUpgrades.isEmpty, refusedAtLogin(&frame, from: id) { return }
        let now = loop.clock.now
        let label = sessions.label(id)
        engine.activity(id, now: now)
        if ping != nil, trace.isRecording {
            let traced = label ?? sessions.tracedLabel(id)
            trace.record(.in, time: now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId, frameText: bytes)
        }
        let (decoded, request) = ping.map { (.success(RequestEnvelope(id: .integer($0), request: .ping)), nil) }
            ?? decode(&frame, from: id, label: label, now: now)
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

    /// No fault, silence or held frame that a ping's answer would have to cross: the link
    /// gate would let it through unchanged, and the pong may leave at once.
    var quietForPing: Bool {
        faults.leavesFramesAlone && silent.isEmpty && cutting.isEmpty && inboundHeld.isEmpty && outboundHeld.isEmpty
    }

    /// The common case of a logged-in client's compact `ping` while ``quietForPing``: the
    /// pong's bytes go to the socket the callback holds, with one lookup (the session's,
    /// and the label's when traced) and no action, message or JSON tree. The bytes,
    /// effects and trace entries are those of the rest of ``process(_:ping:from:on:)``
    /// (the ping's and the pong's text kept as they are); false when the frame must take
    /// that path.
    func answeredPing(_ requestID: Int64, bytes: UnsafeRawBufferPointer, from id: ConnectionID, on socket: WebSocket,
                      now: Instant) -> Bool {
        let tracing = trace.isRecording
        let label = tracing ? sessions.label(id) : nil
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

    /// Decodes one text frame (parsed here unless a check before did), tracing it as it
    /// arrived. The parsed frame comes back too when there are scripted replies to match.
    func decode(_ frame: inout InboundFrame, from id: ConnectionID, label: (uid: String, deviceId: String)?,
                now: Instant) -> (Result<RequestEnvelope, RequestRejection>, JSONValue?) {
        do {
            let value = try frame.json()
            var label = label ?? sessions.tracedLabel(id)
            if label == nil, value["op"]?.stringValue == "login", let device = value["deviceId"]?.stringValue {
                let claimed = (uid: value["uid"]?.stringValue ?? "", deviceId: device)
                sessions.claim(id, claimed)
                label = claimed
            }
            trace.record(.in, time: now, connection: id, uid: label?.uid, deviceId: label?.deviceId, frame: value)
            return (RequestDecoder.decode(value), value)
        } catch {
            trace.record(.in, time: now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         text: String(decoding: frame.bytes.prefix(1024), as: UTF8.self))
            return (.failure(RequestRejection(id: nil, error: ChatError(.badRequest, "Not valid JSON: \(error)"))), nil)
        }
    }
}
