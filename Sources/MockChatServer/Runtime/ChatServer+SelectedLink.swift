import ChatProtocol
import EventLoop

/// Links for chosen frames (docs/PROTOCOL.md, 12.7, "Selected frames"): a matching
/// frame is delayed, held, dropped or duplicated on its own, outside the connection's
/// ordered link, so the frames behind it go past.
extension ChatServer {
    /// Whether a link for chosen frames took an outbound frame (it then delivers it).
    func sentThroughSelectedLink(_ frame: JSONValue?, bytes: [UInt8], to id: ConnectionID) -> Bool {
        guard let socket = socket(id), !socket.isClosing else { return false }
        let answers = replying.flatMap { $0.connection == id && frame?["id"] != nil && frame?["event"] == nil ? $0.op : nil }
        let label = loggedInLabel(id)
        guard let (rule, leaves) = faults.takeSelectedLink(.outbound, frame, replyTo: answers, bytes: bytes.count,
                                                           now: loop.clock.now, uid: label?.uid, deviceId: label?.deviceId)
        else { return false }
        let traced = tracedLabel(id)
        guard let leaves else {
            trace.record(.fault, time: loop.clock.now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId,
                         frame: frame, text: "link out: chosen frame dropped")
            return true
        }
        trace.record(.out, time: loop.clock.now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId, frame: frame)
        let copies = rule.duplicate ? 2 : 1
        take(rule, id, leaves: leaves, bytes: copies * bytes.count) { [weak self] in
            guard let socket = self?.socket(id) else { return }
            for _ in 0..<copies { socket.send(text: bytes) }
        }
        // A held frame counts in the connection's unsent output from now on.
        if rule.hold { checkBackPressure(id, socket) }
        return true
    }

    /// Whether a link for chosen frames took an inbound frame (it then processes it).
    func receivedThroughSelectedLink(_ bytes: UnsafeRawBufferPointer, from id: ConnectionID) -> Bool {
        let frame = try? JSONParser.parse(bytes)
        let label = loggedInLabel(id)
        guard let (rule, leaves) = faults.takeSelectedLink(.inbound, frame, replyTo: nil, bytes: bytes.count,
                                                           now: loop.clock.now, uid: label?.uid, deviceId: label?.deviceId)
        else { return false }
        guard let leaves else {
            trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         frame: frame, text: "link in: chosen frame dropped")
            return true
        }
        let copy = [UInt8](bytes)
        let copies = rule.duplicate ? 2 : 1
        take(rule, id, leaves: leaves, bytes: copies * copy.count) { [weak self] in
            for _ in 0..<copies {
                guard let self, self.socket(id) != nil else { return }
                copy.withUnsafeBytes { self.process($0, ping: nil, from: id) }
            }
        }
        if rule.hold { throttleReading(id) }
        return true
    }

    /// Holds, delays or passes a chosen frame, tracing what its link does with it.
    private func take(_ rule: SelectedLink, _ id: ConnectionID, leaves: Instant, bytes: Int,
                      deliver: @escaping () -> Void) {
        let now = loop.clock.now
        let label = tracedLabel(id)
        let way = rule.direction.rawValue
        var notes: [String] = []
        if rule.duplicate { notes.append("duplicated") }
        if rule.hold {
            notes.append("held until the link is removed")
            selectedHolds.append(SelectedHold(rule: rule, connection: id, bytes: bytes, deliver: deliver))
        } else if leaves > now {
            notes.append("delayed \(leaves.milliseconds - now.milliseconds) ms")
            loop.clock.schedule(at: leaves, deliver)
        } else {
            deliver()
        }
        if !notes.isEmpty {
            trace.record(.fault, time: now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         text: "link \(way): chosen frame " + notes.joined(separator: ", "))
        }
    }

    /// Delivers, in order, what the links for chosen frames of `rule`'s selector and
    /// frames hold (all of them with nil): their rule was removed or replaced.
    func releaseSelectedHolds(of rule: SelectedLink?) {
        let released = selectedHolds.filter { rule?.sameTargets($0.rule) ?? true }
        guard !released.isEmpty else { return }
        selectedHolds.removeAll { rule?.sameTargets($0.rule) ?? true }
        trace.record(.fault, time: loop.clock.now, text: "link: \(released.count) held chosen frame(s) released")
        released.forEach { $0.deliver() }
        for id in Set(released.filter { $0.rule.direction == .inbound }.map(\.connection)) { throttleReading(id) }
    }

    /// The bytes the links for chosen frames hold for `id` in `direction`.
    func selectedHeldBytes(_ direction: LinkDirection, _ id: ConnectionID) -> Int {
        selectedHolds.reduce(0) { $0 + ($1.connection == id && $1.rule.direction == direction ? $1.bytes : 0) }
    }

    /// Frees what the links for chosen frames hold for the server's output to `id`,
    /// undelivered (a slow consumer is cut off); the number of frames.
    func discardSelectedHolds(_ id: ConnectionID) -> Int {
        let count = selectedHolds.count
        selectedHolds.removeAll { $0.connection == id && $0.rule.direction == .outbound }
        return count - selectedHolds.count
    }
}
