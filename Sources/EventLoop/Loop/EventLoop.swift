import CLibUV
import MockChatCore

/// One libuv loop and everything scheduled on it.
///
/// An `EventLoop` is confined to the thread that created it: every method, and every
/// callback it makes, runs on that thread. Nothing in this module is `Sendable`; a
/// program that wants several loops runs one per thread.
///
/// Handle ownership follows libuv's rules: the memory of a handle is released only in
/// its close callback, and `shutdown()` closes every handle still open, runs the loop
/// until their callbacks have run, and reports what `uv_loop_close` returned.
public final class EventLoop {
    let uv: UnsafeMutablePointer<uv_loop_t>
    /// Timers of the server and of in-process clients; see ``Clock``.
    public let clock: Clock
    /// Byte and request accounting used to decide when the loop has settled.
    public let traffic = TrafficLedger()
    /// The client WebSockets on this loop, counted for settling with another process.
    public let clientSockets = ClientSockets()
    /// Gathers per-turn writes of connections that coalesce them.
    lazy var coalescer = WriteCoalescer(loop: self)
    private var guardTimer: UnsafeMutablePointer<uv_timer_t>?
    private var isShutDown = false
    private var deferred: [() -> Void] = []
    private let deferredRunner: UnsafeMutablePointer<uv_idle_t>
    /// One buffer for every read on this loop: a read callback consumes it before
    /// the next read can start.
    let readBuffer: UnsafeMutableRawPointer
    /// Lent to the connection whose read is being delivered, to gather its replies in
    /// memory that stays in the cache (see `TCPConnection.didRead`).
    @exclusivity(unchecked) var replyBuffer: [UInt8] = []
    static let readBufferSize = 64 * 1024

    /// Creates a loop whose timers run on `clockMode`.
    public init(clockMode: Clock.Mode = .system) throws(UVError) {
        uv = .allocate(capacity: 1)
        let status = uv_loop_init(uv)
        guard status == 0 else {
            uv.deallocate()
            throw UVError(status, "uv_loop_init")
        }
        clock = Clock(mode: clockMode)
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        deferredRunner = .allocate(capacity: 1)
        uv_idle_init(uv, deferredRunner)
        uv.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        deferredRunner.pointee.data = nil
        clock.attach(to: self)
    }

    deinit {
        precondition(isShutDown, "EventLoop released without shutdown()")
        readBuffer.deallocate()
        uv.deallocate()
    }

    /// The `EventLoop` that owns a libuv loop.
    static func owning(_ loop: UnsafeMutablePointer<uv_loop_t>?) -> EventLoop {
        Unmanaged<EventLoop>.fromOpaque(loop!.pointee.data!).takeUnretainedValue()
    }

    /// Runs `work` on a later turn of the loop, in the order deferred.
    public func deferToLoop(_ work: @escaping () -> Void) {
        deferred.append(work)
        traffic.began()
        guard deferred.count == 1 else { return }
        uv_idle_start(deferredRunner) { idle in
            EventLoop.owning(idle?.pointee.loop).runDeferred()
        }
    }

    private func runDeferred() {
        let batch = deferred
        deferred.removeAll()
        uv_idle_stop(deferredRunner)
        for work in batch {
            work()
            traffic.ended()
        }
    }

    /// Runs until `stop()` is called or nothing is left to do.
    public func run() {
        uv_run(uv, UV_RUN_DEFAULT)
    }

    /// Makes a running `run()` return after the current iteration.
    public func stop() {
        uv_stop(uv)
    }

    /// Processes whatever is ready without blocking. Returns whether handles remain active.
    @discardableResult
    public func poll() -> Bool {
        uv_run(uv, UV_RUN_NOWAIT) != 0
    }

    /// Runs the loop until `condition` holds or `timeout` seconds of wall time pass.
    ///
    /// This is how tests wait: on a condition with a deadline, never a sleep.
    /// Returns whether the condition held.
    @discardableResult
    public func run(timeout: Double, until condition: () -> Bool) -> Bool {
        if condition() { return true }
        let deadline = uv_hrtime() + UInt64(timeout * 1e9)
        defer { disarmGuard() }
        while !condition() {
            let now = uv_hrtime()
            if now >= deadline { return false }
            // Re-armed each turn: libuv's cached time can fire the guard a little
            // before the deadline, and a loop with nothing else to wait for would block.
            // The guard also repeats: when the cached time is stale, the guard falls due
            // in the timer pass at the start of `uv_run` itself, and a one-shot guard
            // would then leave the poll that follows without any timeout.
            armGuard(milliseconds: (deadline - now + 999_999) / 1_000_000)
            uv_run(uv, UV_RUN_ONCE)
        }
        return true
    }

    /// Runs the loop until every byte written by an in-process endpoint has been read
    /// by its in-process peer and no connect, accept or close is still on its way.
    ///
    /// Used with the virtual clock so that each timer firing is fully processed before
    /// the next one: the basis of deterministic traces. Returns false on timeout.
    @discardableResult
    public func settle(timeout: Double = 5) -> Bool {
        poll()
        return run(timeout: timeout) { traffic.isSettled }
    }

    /// Closes every handle, runs the loop until their close callbacks have run, and
    /// returns the status of `uv_loop_close` (0 when nothing leaked).
    @discardableResult
    public func shutdown() -> Int32 {
        guard !isShutDown else { return 0 }
        clock.detach()
        disarmGuard()
        deferred.removeAll()
        deferredRunner.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { handle in
            uv_close(handle) { $0?.deallocate() }
        }
        uv_walk(uv, { handle, _ in
            guard let handle, uv_is_closing(handle) == 0 else { return }
            if let owner = handle.pointee.data,
               let closable = Unmanaged<AnyObject>.fromOpaque(owner).takeUnretainedValue() as? HandleOwner {
                closable.closeForShutdown()
            } else {
                uv_close(handle) { $0?.deallocate() }
            }
        }, nil)
        var spins = 0
        while uv_run(uv, UV_RUN_NOWAIT) != 0 && spins < 10_000 { spins += 1 }
        let status = uv_loop_close(uv)
        isShutDown = true
        return status
    }

    private func armGuard(milliseconds: UInt64) {
        if guardTimer == nil {
            let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
            uv_timer_init(uv, timer)
            timer.pointee.data = nil
            guardTimer = timer
        }
        uv_update_time(uv)
        uv_timer_start(guardTimer, { _ in }, milliseconds, max(milliseconds, 1))
    }

    private func disarmGuard() {
        guard let timer = guardTimer else { return }
        guardTimer = nil
        timer.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { handle in
            uv_close(handle) { $0?.deallocate() }
        }
    }
}

/// An owner of a libuv handle, closed by ``EventLoop/shutdown()``.
protocol HandleOwner: AnyObject {
    /// Starts closing the handle; memory is released in the close callback.
    func closeForShutdown()
}

/// Closes a libuv handle whose `data` holds its owner, retained: the close callback
/// releases the owner and frees the handle's memory.
func closeOwnedHandle<Handle>(_ handle: UnsafeMutablePointer<Handle>) {
    handle.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { handle in
        uv_close(handle) { handle in
            guard let handle, let owner = handle.pointee.data else { return }
            Unmanaged<AnyObject>.fromOpaque(owner).release()
            handle.deallocate()
        }
    }
}

extension EventLoop {
    /// Hands memory the allocator keeps for reuse back to the system (glibc's
    /// `malloc_trim`), after a large structure was freed. Does nothing elsewhere.
    public static func returnFreedMemory() {
        HostSystem.returnFreedMemory()
    }
}
