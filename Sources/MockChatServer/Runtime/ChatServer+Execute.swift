import ChatProtocol
import EventLoop

/// Carrying out the engine's actions: frames (encoded once per message), closes, the
/// cluster's claims and retractions, heartbeat timers; and the slow-consumer rule.
extension ChatServer {
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
                let plain = faults.leavesFramesAlone && outboundHeld.isEmpty && cutting.isEmpty
                for id in recipients {
                    if plain && !tracing {
                        // No fault and no trace: nothing to look up but the socket.
                        if let socket = sockets[id] {
                            socket.send(text: bytes)
                            checkBackPressure(id, socket)
                        }
                        continue
                    }
                    let label = sessions.label(id) ?? engine.session(id).flatMap { s in s.uid.map { ($0, s.deviceId ?? "") } }
                    if faults.isBlackholed(uid: label?.0, deviceId: label?.1) {
                        trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.0, deviceId: label?.1,
                                     frame: frame, text: "blackhole: outbound frame discarded")
                        continue
                    }
                    let traced = label ?? sessions.tracedLabel(id)
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
    func carryOutClose(_ id: ConnectionID, code: CloseCode, reason: String) {
        let label = sessions.tracedLabel(id)
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

    /// Closes with 4008 a connection whose unsent bytes (queued in the socket, or held
    /// by its outbound link) exceed the limit.
    func checkBackPressure(_ id: ConnectionID, _ socket: WebSocket) {
        let queued = socket.connection.queuedWriteBytes
        let chosen = selectedHolds.isEmpty ? 0 : selectedHeldBytes(.outbound, id)
        let held = outboundHeld.bytes(of: id)
        guard queued + held + chosen > configuration.outboundQueueLimit, !socket.isClosing else { return }
        logger.warning("closing slow consumer \(id): \(queued) bytes queued, \(held + chosen) held by its links")
        if chosen > 0 {
            let count = discardSelectedHolds(id)
            let traced = tracedLabel(id)
            trace.record(.fault, time: loop.clock.now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId,
                         text: "link out: \(count) held chosen frames (\(chosen) bytes) dropped, slow consumer")
        }
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
}
