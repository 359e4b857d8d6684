import EventLoop
import Synchronization

/// What arrives from the other end of a driver connection, in order.
public enum DriverInput: Sendable {
    /// One message: a line of stdout, or a WebSocket text frame.
    case message([UInt8])
    /// A line longer than the transport takes (stdio: ``StdioDriverChannel/maxLineBytes``).
    case overlong(limit: Int)
    /// The other end is gone; why, in words (`exited with status 1`).
    case closed(String)
}

/// A thread-safe queue of ``DriverInput`` filled by reader threads and emptied on a
/// loop's thread, which it wakes on each arrival.
public final class DriverInbox: Sendable {
    private let state = Mutex<(items: [DriverInput], waker: LoopWaker?)>(([], nil))

    public init() {}

    /// Adds an input and wakes the attached loop.
    public func push(_ input: DriverInput) {
        let waker = state.withLock { state in
            state.items.append(input)
            return state.waker
        }
        waker?.wake()
    }

    /// Everything queued so far, oldest first.
    public func take() -> [DriverInput] {
        state.withLock { state in
            defer { state.items.removeAll() }
            return state.items
        }
    }

    public var isEmpty: Bool { state.withLock { $0.items.isEmpty } }

    /// The loop to wake from now on (nil: none).
    public func attach(_ waker: LoopWaker?) {
        let pending = state.withLock { state in
            state.waker = waker
            return !state.items.isEmpty
        }
        if pending { waker?.wake() }
    }
}
