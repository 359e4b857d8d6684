import EventLoop

/// What the links hold for later, for one direction: per connection, the frames in the
/// order they leave, each with its timer and size. The one owner of held frames, so
/// they can be counted (the slow-consumer rule), delivered at once when a fault is
/// removed, and freed with their timers when the connection closes or the server resets.
struct HeldFrames {
    /// One held frame: `deliver` runs when `timer` fires, or earlier on release.
    struct Frame {
        let number: UInt64
        let timer: Clock.TimerID
        let bytes: Int
        let deliver: () -> Void
    }

    /// A connection's held frames; `frames[head...]` are still waiting.
    private struct Queue {
        var last: Instant
        var frames: [Frame] = []
        var head = 0
        var bytes = 0
    }

    private var queues: [ConnectionID: Queue] = [:]
    private var numbered: UInt64 = 0

    /// Nothing held for any connection.
    var isEmpty: Bool { queues.isEmpty }

    /// Connections with frames held, in order.
    var connections: [ConnectionID] { queues.keys.sorted() }

    /// Whether frames of `id` are held: a new frame must not overtake them.
    func isWaiting(_ id: ConnectionID) -> Bool { queues[id] != nil }

    /// When the last held frame of `id` leaves.
    func last(_ id: ConnectionID) -> Instant? { queues[id]?.last }

    /// The payload bytes held for `id`.
    func bytes(of id: ConnectionID) -> Int { queues[id]?.bytes ?? 0 }

    /// The number the next frame gets; its timer names it to ``take(_:number:)``.
    mutating func nextNumber() -> UInt64 {
        numbered += 1
        return numbered
    }

    mutating func add(_ frame: Frame, for id: ConnectionID, leaving time: Instant) {
        var queue = queues[id] ?? Queue(last: time)
        queue.last = max(time, queue.last)
        queue.frames.append(frame)
        queue.bytes += frame.bytes
        queues[id] = queue
    }

    /// Removes the frame whose timer fired (the first waiting, as frames leave in order).
    mutating func take(_ id: ConnectionID, number: UInt64) -> Frame? {
        guard var queue = queues[id],
              let index = queue.frames[queue.head...].firstIndex(where: { $0.number == number }) else { return nil }
        let frame = queue.frames[index]
        if index == queue.head {
            queue.head += 1
        } else {
            queue.frames.remove(at: index)
        }
        queue.bytes -= frame.bytes
        if queue.head == queue.frames.count {
            queues[id] = nil
            return frame
        }
        if queue.head >= 64, queue.head * 2 >= queue.frames.count {
            queue.frames.removeFirst(queue.head)
            queue.head = 0
        }
        queues[id] = queue
        return frame
    }

    /// Removes every frame held for `id`, in the order they would have left; the caller
    /// cancels their timers and delivers or discards them.
    mutating func removeAll(_ id: ConnectionID) -> [Frame] {
        guard let queue = queues.removeValue(forKey: id) else { return [] }
        return Array(queue.frames[queue.head...])
    }
}
