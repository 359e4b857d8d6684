import ChatProtocol
import EventLoop

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
        let last = held.last(id)
        guard let index = linkHoldingFrames(direction, id) else {
            return last.map { .at($0) } ?? .now
        }
        let now = loop.clock.now
        guard let leaves = faults.links[index].shape.departure(of: bytes, at: now, after: last, droppable: droppable) else {
            return .dropped
        }
        return leaves > now || last != nil ? .at(leaves) : .now
    }

    /// The index of the link rule that holds or drops the frames of `id` in `direction`.
    private func linkHoldingFrames(_ direction: LinkDirection, _ id: ConnectionID) -> Int? {
        let label = loggedInLabel(id)
        guard let index = faults.link(direction, uid: label?.uid, deviceId: label?.deviceId),
              faults.links[index].shape.holdsFrames else { return nil }
        return index
    }

    /// Runs `deliver` when a held frame of `bytes` bytes is due, keeping the order of the
    /// connection's frames. The frame counts in the connection's held bytes until then.
    func hold(_ direction: LinkDirection, _ id: ConnectionID, until time: Instant, bytes: Int,
              _ deliver: @escaping () -> Void) {
        let number = updateHeld(direction) { $0.nextNumber() }
        let timer = loop.clock.schedule(at: time) { [weak self] in
            guard let self, let frame = self.updateHeld(direction, { $0.take(id, number: number) }) else { return }
            frame.deliver()
            if direction == .inbound { self.throttleReading(id) }
        }
        updateHeld(direction) { $0.add(.init(number: number, timer: timer, bytes: bytes, deliver: deliver), for: id, leaving: time) }
        if direction == .inbound { throttleReading(id) }
    }

    @discardableResult
    private func updateHeld<T>(_ direction: LinkDirection, _ change: (inout HeldFrames) -> T) -> T {
        direction == .inbound ? change(&inboundHeld) : change(&outboundHeld)
    }

    /// Removes what the link in `direction` holds for `id`, cancelling the timers;
    /// returns the frames in order, for the caller to deliver or drop.
    @discardableResult
    func removeHeld(_ direction: LinkDirection, _ id: ConnectionID) -> [HeldFrames.Frame] {
        let frames = updateHeld(direction) { $0.removeAll(id) }
        for frame in frames { loop.clock.cancel(frame.timer) }
        if direction == .inbound, readingPaused.remove(id) != nil { socket(id)?.connection.resumeReading() }
        return frames
    }

    /// Delivers at once, in order, what links hold for connections whose link no longer
    /// holds frames (the fault was removed or changed): later frames then wait behind
    /// nothing. Outbound first, so replies to released requests meet an empty queue.
    func releaseHeldFrames() {
        for direction in [LinkDirection.outbound, .inbound] {
            let held = direction == .inbound ? inboundHeld : outboundHeld
            for id in held.connections where linkHoldingFrames(direction, id) == nil {
                let frames = removeHeld(direction, id)
                trace.record(.fault, time: loop.clock.now, connection: id, text: "link \(direction.rawValue): "
                             + "\(frames.count) held frames delivered at once, the link no longer holds them")
                frames.forEach { $0.deliver() }
            }
        }
    }

    /// Frees what the links hold for `id`, undelivered, with their timers (the
    /// connection closed, or is being cut off).
    func discardHeld(_ id: ConnectionID) {
        removeHeld(.inbound, id)
        removeHeld(.outbound, id)
    }

    /// Stops reading a connection while its inbound links hold more than the
    /// outbound queue limit, as a full TCP window would; reading resumes below half.
    func throttleReading(_ id: ConnectionID) {
        let held = inboundHeld.bytes(of: id) + (selectedHolds.isEmpty ? 0 : selectedHeldBytes(.inbound, id))
        if held > configuration.outboundQueueLimit, !readingPaused.contains(id), let socket = socket(id) {
            readingPaused.insert(id)
            socket.connection.pauseReading()
        } else if held <= configuration.outboundQueueLimit / 2, readingPaused.remove(id) != nil {
            socket(id)?.connection.resumeReading()
        }
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
