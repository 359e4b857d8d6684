import CLibUV
import MockChatCore

/// Calls `handler` on the loop when the process receives one of `signals`.
public final class SignalWatcher: HandleOwner {
    private var handles: [UnsafeMutablePointer<uv_signal_t>] = []
    private let handler: (Int32) -> Void

    /// Starts watching; watching ends with ``close()`` or the loop's shutdown.
    public init(loop: EventLoop, signals: [Int32], handler: @escaping (Int32) -> Void) {
        self.handler = handler
        for signal in signals {
            let handle = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
            uv_signal_init(loop.uv, handle)
            handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
            uv_signal_start(handle, { handle, signal in
                guard let owner = handle?.pointee.data else { return }
                Unmanaged<SignalWatcher>.fromOpaque(owner).takeUnretainedValue().handler(signal)
            }, signal)
            handles.append(handle)
        }
        // A blocked signal never reaches libuv's handler, and a process inherits its
        // parent's mask: Foundation's `Process` on Linux, for one, starts children with
        // SIGTERM blocked. Unblock the watched signals on the loop's thread, now that the
        // handlers are in place: one that arrived while blocked is delivered to them.
        Self.setMask(SIG_UNBLOCK, signals)
    }

    /// Blocks `signals` on the calling thread. Call it first thing in `main` for the
    /// signals a watcher will handle: one arriving before the watcher exists then waits
    /// for it instead of ending the process.
    public static func block(_ signals: [Int32]) {
        setMask(SIG_BLOCK, signals)
    }

    private static func setMask(_ how: Int32, _ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        pthread_sigmask(how, &set, nil)
    }

    /// Stops watching.
    public func close() {
        let open = handles
        handles.removeAll()
        for handle in open { closeOwnedHandle(handle) }
    }

    func closeForShutdown() { close() }
}
