import ChatProtocol
import Dispatch
import EventLoop
import Foundation
import Synchronization

/// One WebSocket served by a loop on a thread of its own, for a connection that must
/// outlive the loops of single scenarios (the harness listening for a driver, or a
/// driver dialling the harness). Text messages arrive in ``inbox``; ``send(_:)`` may be
/// called from any thread.
public final class WebSocketBridge: Sendable {
    /// What the other end sent, and the end of each connection.
    public let inbox = DriverInbox()
    private let state = Mutex<(items: [Outgoing], connected: Bool, waker: LoopWaker?)>(([], false, nil))
    private let settled = DispatchSemaphore(value: 0)

    private enum Outgoing: Sendable {
        case text([UInt8])
        /// Signalled once the connection is cut.
        case drop(DispatchSemaphore)
    }

    /// Starts the thread; `setUp` runs on it, with its loop and a function that makes a
    /// socket the current one, and returns what the caller needs or throws.
    public static func start<Value: Sendable>(
        _ setUp: @escaping @Sendable (EventLoop, WebSocketBridge) throws(ScenarioError) -> Value
    ) throws(ScenarioError) -> (WebSocketBridge, Value) {
        let bridge = WebSocketBridge()
        let ready = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Value, ScenarioError>?>(nil)
        Thread.detachNewThread {
            let loop: EventLoop
            do {
                loop = try EventLoop(clockMode: .system)
            } catch {
                outcome.withLock { $0 = .failure(ScenarioError("cannot create a loop: \(error)")) }
                ready.signal()
                return
            }
            let current = CurrentSocket()
            let waker = LoopWaker(loop: loop) { bridge.flush(to: current) }
            bridge.state.withLock { $0.waker = waker }
            bridge.currentHolder = current
            do throws(ScenarioError) {
                let value = try setUp(loop, bridge)
                outcome.withLock { $0 = .success(value) }
            } catch {
                // A bridge that could not start (a port in use) closes its loop before the
                // caller hears of it: a loop released without shutdown() traps.
                bridge.state.withLock { $0.waker = nil }
                waker.close()
                loop.shutdown()
                outcome.withLock { $0 = .failure(error) }
                ready.signal()
                return
            }
            ready.signal()
            loop.run()
        }
        ready.wait()
        switch outcome.withLock({ $0 })! {
        case .failure(let error): throw error
        case .success(let value): return (bridge, value)
        }
    }

    /// Set on the bridge's thread before `setUp` runs; only used there.
    nonisolated(unsafe) private var currentHolder: CurrentSocket?

    /// Makes `socket` the connection (closing a previous one). Call on the bridge's thread.
    public func adopt(_ socket: WebSocket) {
        guard let current = currentHolder else { return }
        current.socket?.close(code: 1000, reason: "replaced by a new connection")
        current.socket = socket
        state.withLock { $0.connected = true }
        settled.signal()
        let inbox = inbox
        socket.onText = { [weak socket] bytes in
            guard current.socket === socket else { return }   // a dropped connection has nothing more to say
            inbox.push(.message(Array(bytes)))
        }
        socket.onClosed = { [weak socket, weak self] info in
            guard let self, current.socket === socket else { return }
            current.socket = nil
            self.state.withLock { $0.connected = false }
            inbox.push(.closed("closed the connection (\(info.received.map { "code \($0)" } ?? info.abnormal ?? "no close frame"))"))
        }
    }

    /// Keeps `object` (a listener) alive as long as the bridge's thread. Call on that thread.
    public func keep(_ object: AnyObject) { currentHolder?.kept.append(object) }

    /// Reports a connection that never came about. Call on the bridge's thread.
    public func failed(_ why: String) {
        inbox.push(.closed(why))
        settled.signal()
    }

    /// Waits until the first connection is made or has failed; false on timeout.
    public func waitForFirstConnection(timeout: Double) -> Bool {
        settled.wait(timeout: .now() + timeout) == .success
    }

    /// Queues a text message; false when nothing is connected.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        let (connected, waker) = state.withLock { state in
            if state.connected { state.items.append(.text(bytes)) }
            return (state.connected, state.waker)
        }
        waker?.wake()
        return connected
    }

    /// Cuts the current connection and returns once the bridge's thread has (at most 5 s):
    /// from then on nothing that connection sends reaches ``inbox``, and its end is not
    /// reported there either, since the caller cut it. Not to be called on the bridge's thread.
    public func drop() {
        let done = DispatchSemaphore(value: 0)
        let waker = state.withLock { state in
            state.items.append(.drop(done))
            state.connected = false
            return state.waker
        }
        waker?.wake()
        _ = done.wait(timeout: .now() + 5)
    }

    private func flush(to current: CurrentSocket) {
        let items = state.withLock { state in
            defer { state.items.removeAll() }
            return state.items
        }
        for item in items {
            switch item {
            case .text(let bytes): current.socket?.send(text: bytes)
            case .drop(let done):
                let socket = current.socket
                current.socket = nil
                socket?.drop()
                done.signal()
            }
        }
    }
}

/// The bridge's connection, confined to its thread.
private final class CurrentSocket {
    var socket: WebSocket?
    var kept: [AnyObject] = []
}
