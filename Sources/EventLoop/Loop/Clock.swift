import CLibUV

/// The single clock every timer of the server and of in-process clients runs on.
///
/// - `system`: `now` is the wall clock and timers fire on their own through one libuv
///   timer armed for the earliest deadline. Deadlines are kept on the monotonic clock,
///   so a step of the wall clock (a time sync, a resumed machine) neither fires a
///   heartbeat deadline early nor holds it back.
/// - `virtual`: time stands still until ``advance(to:settle:)`` moves it. Due timers
///   fire in order of deadline, ties in order of scheduling, and the caller's `settle`
///   runs after each firing so that its effects are complete before the next.
///
/// Timers are plain closures identified by a ``TimerID``; cancelling an unknown or
/// already fired timer is harmless.
public final class Clock {
    /// How time passes.
    public enum Mode: Sendable, Equatable {
        case system
        case virtual(start: Instant)
    }

    /// A handle to cancel a scheduled timer.
    public struct TimerID: Hashable, Sendable {
        let sequence: UInt64
    }

    public let mode: Mode
    private var virtualNow: Instant
    private var queue = TimerHeap()
    private var callbacks: [UInt64: () -> Void] = [:]
    private var nextSequence: UInt64 = 0
    private var wakeTimer: UnsafeMutablePointer<uv_timer_t>?
    private var armedFor: Instant?
    /// The wall clock of system mode; replaced in tests to step it.
    var wallClock: () -> Instant = {
        var tv = uv_timeval64_t()
        uv_gettimeofday(&tv)
        return Instant(milliseconds: tv.tv_sec * 1000 + Int64(tv.tv_usec / 1000))
    }

    init(mode: Mode) {
        self.mode = mode
        switch mode {
        case .system: virtualNow = Instant(milliseconds: 0)
        case .virtual(let start): virtualNow = start
        }
    }

    /// Whether time only moves when advanced.
    public var isVirtual: Bool { mode != .system }

    /// The current time.
    public var now: Instant { mode == .system ? wallClock() : virtualNow }

    /// Where deadlines are kept: virtual time, or in system mode the monotonic clock.
    private var timelineNow: Instant {
        mode == .system ? Instant(milliseconds: Int64(uv_hrtime() / 1_000_000)) : virtualNow
    }

    /// Number of timers waiting to fire.
    public var pendingTimers: Int { callbacks.count }

    /// The deadline of the earliest pending timer.
    public var nextDeadline: Instant? {
        guard let deadline = earliestOnTimeline else { return nil }
        return mode == .system ? now.advanced(by: deadline.milliseconds - timelineNow.milliseconds) : deadline
    }

    private var earliestOnTimeline: Instant? {
        while let top = queue.peek, callbacks[top.sequence] == nil { _ = queue.pop() }
        return queue.peek?.deadline
    }

    /// Schedules `fire` at `deadline` (at once on the next firing pass if it is past).
    @discardableResult
    public func schedule(at deadline: Instant, _ fire: @escaping () -> Void) -> TimerID {
        enqueue(mode == .system ? timelineNow.advanced(by: deadline.milliseconds - now.milliseconds) : deadline, fire)
    }

    /// Schedules `fire` after `milliseconds` from now.
    @discardableResult
    public func schedule(after milliseconds: Int64, _ fire: @escaping () -> Void) -> TimerID {
        enqueue(timelineNow.advanced(by: milliseconds), fire)
    }

    private func enqueue(_ deadline: Instant, _ fire: @escaping () -> Void) -> TimerID {
        nextSequence += 1
        queue.push(.init(deadline: deadline, sequence: nextSequence))
        callbacks[nextSequence] = fire
        rearm()
        return TimerID(sequence: nextSequence)
    }

    /// Cancels a timer; a no-op if it already fired or was cancelled.
    public func cancel(_ id: TimerID?) {
        guard let id else { return }
        callbacks[id.sequence] = nil
    }

    /// Moves virtual time forward to `target`, firing every timer due on the way in
    /// deadline order and calling `settle` after each. Returns the number fired.
    @discardableResult
    public func advance(to target: Instant, settle: () -> Void = {}) -> Int {
        precondition(isVirtual, "only a virtual clock can be advanced")
        var fired = 0
        while let deadline = earliestOnTimeline, deadline <= target, let entry = queue.pop() {
            guard let callback = callbacks.removeValue(forKey: entry.sequence) else { continue }
            if entry.deadline > virtualNow { virtualNow = entry.deadline }
            callback()
            fired += 1
            settle()
        }
        if target > virtualNow { virtualNow = target }
        return fired
    }

    /// Moves virtual time to `instant` without firing the timers due at that instant;
    /// none may be due before it. Lets another clock catch up first.
    public func move(to instant: Instant) {
        precondition(isVirtual, "only a virtual clock can be moved")
        precondition(earliestOnTimeline.map { $0 >= instant } ?? true, "timers are due before \(instant)")
        if instant > virtualNow { virtualNow = instant }
    }

    /// Sets virtual time to `instant`, moving every pending timer by the same amount
    /// so that what was due in 5 s is still due in 5 s. Used to start runs at a known
    /// time.
    public func jump(to instant: Instant) {
        precondition(isVirtual, "only a virtual clock can jump")
        let delta = instant.milliseconds - virtualNow.milliseconds
        var shifted = TimerHeap()
        while let entry = queue.pop() {
            guard callbacks[entry.sequence] != nil else { continue }
            shifted.push(.init(deadline: entry.deadline.advanced(by: delta), sequence: entry.sequence))
        }
        queue = shifted
        virtualNow = instant
    }

    /// Fires every timer whose deadline has passed (system mode) and re-arms.
    private func fireDue() {
        armedFor = nil
        let current = timelineNow
        while let deadline = earliestOnTimeline, deadline <= current, let entry = queue.pop() {
            callbacks.removeValue(forKey: entry.sequence)?()
        }
        rearm()
    }

    // MARK: libuv wiring (system mode only)

    func attach(to loop: EventLoop) {
        guard mode == .system else { return }
        let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        uv_timer_init(loop.uv, timer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        wakeTimer = timer
    }

    func detach() {
        guard let timer = wakeTimer else { return }
        wakeTimer = nil
        callbacks.removeAll()
        timer.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { handle in
            handle.pointee.data = nil
            uv_close(handle) { $0?.deallocate() }
        }
    }

    private func rearm() {
        guard let timer = wakeTimer, let deadline = earliestOnTimeline else { return }
        if let armed = armedFor, armed <= deadline { return }
        armedFor = deadline
        let delay = max(0, deadline.milliseconds - timelineNow.milliseconds)
        uv_timer_start(timer, { timer in
            guard let owner = timer?.pointee.data else { return }
            Unmanaged<Clock>.fromOpaque(owner).takeUnretainedValue().fireDue()
        }, UInt64(delay), 0)
    }
}

/// A binary min-heap of (deadline, sequence): deterministic order for equal deadlines.
struct TimerHeap {
    struct Entry: Comparable {
        var deadline: Instant
        var sequence: UInt64
        static func < (a: Entry, b: Entry) -> Bool {
            (a.deadline, a.sequence) < (b.deadline, b.sequence)
        }
    }

    private var items: [Entry] = []

    var peek: Entry? { items.first }

    mutating func push(_ entry: Entry) {
        items.append(entry)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child] < items[parent] else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Entry? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count, items[left] < items[smallest] { smallest = left }
            if right < items.count, items[right] < items[smallest] { smallest = right }
            if smallest == parent { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }
}
