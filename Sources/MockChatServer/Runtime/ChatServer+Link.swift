import ChatProtocol
import EventLoop

/// Frames a link holds for later, per connection: when the last one leaves, and how
/// many are waiting. A frame never overtakes one that is held.
struct HeldFrames {
    var last: [ConnectionID: Instant] = [:]
    var waiting: [ConnectionID: Int] = [:]

    mutating func forget(_ id: ConnectionID) {
        last[id] = nil
        waiting[id] = nil
    }
}

/// What a link does with one frame.
enum LinkPassage: Equatable {
    case now
    case at(Instant)
    case dropped
}

/// The links' side of the server: every frame in either direction passes through the
/// connection's ``LinkShape`` for that direction (docs/PROTOCOL.md, 12.7).
extension ChatServer {
    /// What the link in `direction` does with a frame of `bytes` bytes for connection
    /// `id`; closes pass `droppable: false`.
    func passage(_ direction: LinkDirection, _ id: ConnectionID, bytes: Int, droppable: Bool = true) -> LinkPassage {
        let held = direction == .inbound ? inboundHeld : outboundHeld
        let waiting = held.waiting[id, default: 0] > 0
        let label = loggedInLabel(id)
        guard let index = faults.link(direction, uid: label?.uid, deviceId: label?.deviceId),
              faults.links[index].shape.holdsFrames else {
            return waiting ? .at(held.last[id] ?? loop.clock.now) : .now
        }
        let now = loop.clock.now
        guard let leaves = faults.links[index].shape.departure(of: bytes, at: now, after: held.last[id],
                                                                droppable: droppable) else {
            return .dropped
        }
        return leaves > now || waiting ? .at(leaves) : .now
    }

    /// Runs `work` when a held frame is due, keeping the order of the connection's frames.
    func hold(_ direction: LinkDirection, _ id: ConnectionID, until time: Instant, _ work: @escaping () -> Void) {
        updateHeld(direction) { held in
            held.last[id] = max(time, held.last[id] ?? time)
            held.waiting[id, default: 0] += 1
        }
        loop.clock.schedule(at: time) { [weak self] in
            guard let self else { return }
            self.updateHeld(direction) { held in
                let left = held.waiting[id, default: 1] - 1
                held.waiting[id] = left > 0 ? left : nil
            }
            work()
        }
    }

    private func updateHeld(_ direction: LinkDirection, _ change: (inout HeldFrames) -> Void) {
        if direction == .inbound { change(&inboundHeld) } else { change(&outboundHeld) }
    }

    /// Closes a connection through its outbound link: a close frame with `code`, or,
    /// on a link that withholds close frames, the end of the stream without one.
    func close(_ id: ConnectionID, code: UInt16, reason: String) {
        let label = loggedInLabel(id)
        let withheld = faults.link(.outbound, uid: label?.uid, deviceId: label?.deviceId)
            .map { !faults.links[$0].shape.closeFrames } ?? false
        guard withheld else {
            deliver(to: id) { socket in socket.close(code: code, reason: reason) }
            return
        }
        let traced = tracedLabel(id)
        trace.record(.fault, time: loop.clock.now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId,
                     text: "link out: close frame \(code) withheld")
        deliver(to: id) { socket in socket.endWithoutCloseFrame() }
    }

    /// Sets each open connection's write slicing from the outbound links in force.
    func refreshSlicing() {
        for id in socketIDs { refreshSlicing(id) }
    }

    func refreshSlicing(_ id: ConnectionID) {
        guard let socket = socket(id), !stalled.contains(id) else { return }
        let label = loggedInLabel(id)
        let slicing = faults.link(.outbound, uid: label?.uid, deviceId: label?.deviceId).flatMap { faults.links[$0].shape.slicing }
        if socket.connection.slicing != slicing { socket.connection.slicing = slicing }
    }
}
