import CLibUV
import Synchronization

/// Lets another thread wake a loop: `wake()` may be called from any thread; `onWake`
/// then runs on the loop's thread (several wakes may be merged into one call).
///
/// Used where a blocking reader (a child process's pipe, a connection served by
/// another loop) hands messages to a loop that must keep serving while it waits.
/// Create and close it on the loop's thread.
public final class LoopWaker: HandleOwner, @unchecked Sendable {
    private let handle: UnsafeMutablePointer<uv_async_t>
    private let isClosed = Mutex(false)
    private let onWake: () -> Void

    public init(loop: EventLoop, onWake: @escaping () -> Void = {}) {
        self.onWake = onWake
        handle = .allocate(capacity: 1)
        uv_async_init(loop.uv, handle) { async in
            guard let owner = async?.pointee.data else { return }
            Unmanaged<LoopWaker>.fromOpaque(owner).takeUnretainedValue().onWake()
        }
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    /// Wakes the loop; a no-op once closed.
    public func wake() {
        isClosed.withLock { closed in
            if !closed { uv_async_send(handle) }
        }
    }

    /// Releases the handle; later `wake()` calls do nothing.
    public func close() {
        let wasOpen = isClosed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard wasOpen else { return }
        closeOwnedHandle(handle)
    }

    func closeForShutdown() { close() }
}
