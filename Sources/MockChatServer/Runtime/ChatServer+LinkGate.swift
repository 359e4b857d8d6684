import ChatProtocol
import EventLoop

/// The link gate: every frame the server reads or writes crosses the connection's link
/// for that direction (blackholes, standing links, links for chosen frames), which lets
/// it through now, holds it, or drops it (docs/ARCHITECTURE.md, "Faults").
extension ChatServer {
    /// The inbound side of the connection's link: true when the frame goes on now; false
    /// when it is discarded (a blackhole, a link's drop) or held (then processed when the
    /// link lets it through).
    func passesInboundGate(_ bytes: UnsafeRawBufferPointer, from id: ConnectionID) -> Bool {
        let now = loop.clock.now
        let label = sessions.label(id)
        if isBlackholed(id) {
            trace.record(.fault, time: now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         text: "blackhole: inbound frame discarded")
            return false
        }
        if !faults.selectedLinks.isEmpty, receivedThroughSelectedLink(bytes, from: id) { return false }
        guard !faults.links.isEmpty || !inboundHeld.isEmpty else { return true }
        switch passage(.inbound, id, bytes: bytes.count) {
        case .now:
            return true
        case .dropped:
            trace.record(.fault, time: now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         text: "link in: frame dropped")
            return false
        case .at(let time):
            let copy = [UInt8](bytes)
            hold(.inbound, id, until: time, bytes: copy.count) { [weak self] in
                guard let self, self.sockets[id] != nil else { return }
                copy.withUnsafeBytes { self.process($0, ping: self.compactPing($0), from: id) }
            }
            return false
        }
    }

    func isBlackholed(_ id: ConnectionID) -> Bool {
        guard !faults.blackholes.isEmpty else { return false }
        let label = sessions.label(id)
        return faults.isBlackholed(uid: label?.uid, deviceId: label?.deviceId)
    }

    /// Sends one text frame through the connection's outbound link, tracing it as
    /// queued (its JSON, or else its `text`), or as dropped by the link.
    func send(_ frame: JSONValue?, text: String? = nil, bytes: [UInt8], to id: ConnectionID) {
        if !faults.selectedLinks.isEmpty, sentThroughSelectedLink(frame, bytes: bytes, to: id) { return }
        let traced = sessions.tracedLabel(id)
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
            if !self.cutting.isEmpty { self.countForCut(bytes.count, on: id) }
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

    func carry(_ way: LinkPassage, to id: ConnectionID, bytes: Int, _ work: @escaping (WebSocket) -> Void) {
        guard !isBlackholed(id) else { return }
        switch way {
        case .now, .dropped: sockets[id].map(work)
        case .at(let time): hold(.outbound, id, until: time, bytes: bytes) { [weak self] in self?.sockets[id].map(work) }
        }
    }
}
