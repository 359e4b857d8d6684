import Foundation
import MockChatCore
import Synchronization

/// A progress line on stderr: rewritten in place on a terminal (at most ten times a
/// second), or printed as a plain line every few seconds when stderr is a file or a
/// pipe, as under `make`. Safe to update from several threads.
public final class ProgressLine: Sendable {
    private struct State {
        var lastWrite: UInt64 = 0
        var pending: String?
    }

    private let interactive: Bool
    private let interval: UInt64
    private let state = Mutex(State())

    public init() {
        interactive = isatty(STDERR_FILENO) == 1
        interval = interactive ? 100_000_000 : 5_000_000_000
    }

    /// A line printed as it is, at once.
    public func note(_ text: String) {
        write(text + "\n")
    }

    /// The current state; shown if enough time has passed since the last one.
    public func update(_ text: String) {
        let now = MonotonicTime.now()
        let show: Bool = state.withLock { state in
            state.pending = text
            guard now - state.lastWrite >= interval else { return false }
            state.lastWrite = now
            if !interactive { state.pending = nil }
            return true
        }
        if show { write(interactive ? "\r\u{1B}[K" + text : text + "\n") }
    }

    /// Shows the last state for good, so the next output starts on a new line.
    public func finish() {
        let pending: String? = state.withLock { state in
            defer {
                state.pending = nil
                state.lastWrite = 0
            }
            return state.pending
        }
        if let pending { write(interactive ? "\r\u{1B}[K" + pending + "\n" : pending + "\n") }
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
