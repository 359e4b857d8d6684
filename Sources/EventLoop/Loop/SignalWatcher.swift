import CLibUV
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Calls `handler` on the loop when the process receives one of `signals`.
public final class SignalWatcher: HandleOwner {
    private var handles: [UnsafeMutablePointer<uv_signal_t>] = []
    private let handler: (Int32) -> Void

    /// Starts watching; watching ends with ``close()`` or the loop's shutdown.
    public init(loop: EventLoop, signals: [Int32], handler: @escaping (Int32) -> Void) {
        self.handler = handler
        // A blocked signal never reaches libuv's handler, and a process inherits its
        // parent's mask: Foundation's `Process` on Linux, for one, starts children with
        // SIGTERM blocked. Unblock the watched signals on the loop's thread.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in signals { sigaddset(&unblock, signal) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
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
    }

    /// Stops watching.
    public func close() {
        let open = handles
        handles.removeAll()
        for handle in open {
            handle.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { handle in
                uv_close(handle) { handle in
                    guard let handle, let owner = handle.pointee.data else { return }
                    Unmanaged<SignalWatcher>.fromOpaque(owner).release()
                    handle.deallocate()
                }
            }
        }
    }

    func closeForShutdown() { close() }
}
