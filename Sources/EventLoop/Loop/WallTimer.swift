import CLibUV

/// A one-shot timer on the machine's monotonic time, whatever the loop's ``Clock``:
/// for pacing that must go on while a virtual clock stands still (the web console's
/// live stream flushes on it). It keeps nothing of its own pending once fired.
///
/// Create and use it on the loop's thread; ``close()`` or the loop's shutdown ends it.
public final class WallTimer: HandleOwner {
    private var handle: UnsafeMutablePointer<uv_timer_t>?
    private var fire: (() -> Void)?

    public init(loop: EventLoop) {
        let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        uv_timer_init(loop.uv, timer)
        timer.pointee.data = Unmanaged.passRetained(self).toOpaque()
        handle = timer
    }

    /// Whether a start is waiting to fire.
    public private(set) var isArmed = false

    /// Calls `fire` once, `milliseconds` from now; replaces a start still waiting.
    public func start(after milliseconds: UInt64, _ fire: @escaping () -> Void) {
        guard let handle else { return }
        self.fire = fire
        isArmed = true
        uv_timer_start(handle, { timer in
            guard let owner = timer?.pointee.data else { return }
            let this = Unmanaged<WallTimer>.fromOpaque(owner).takeUnretainedValue()
            this.isArmed = false
            let fire = this.fire
            this.fire = nil
            fire?()
        }, milliseconds, 0)
    }

    /// Cancels a waiting start.
    public func stop() {
        guard let handle else { return }
        uv_timer_stop(handle)
        isArmed = false
        fire = nil
    }

    /// Releases the handle; later starts do nothing.
    public func close() {
        guard let timer = handle else { return }
        handle = nil
        isArmed = false
        fire = nil
        closeOwnedHandle(timer)
    }

    func closeForShutdown() { close() }
}
