#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A progress line on stderr: rewritten in place on a terminal (at most ten times a
/// second), or printed as a plain line every few seconds when stderr is a file or a
/// pipe, as under `make`, so CI logs carry no `\r`. Safe to update from several threads.
public final class ProgressLine: Sendable {
    private struct State {
        var lastWrite: UInt64 = 0
        /// The latest state not yet printed for good.
        var pending: String?
    }

    /// Whether the line is rewritten in place; otherwise each shown state is its own line.
    public let isInteractive: Bool
    private let enabled: Bool
    private let interval: UInt64
    private let output: @Sendable (String) -> Void
    private let state = Mutex(State())

    /// Whether stderr is a terminal.
    public static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// - Parameters:
    ///   - enabled: when false, nothing is printed at all.
    ///   - interactive: rewrite the line in place (default: when stderr is a terminal).
    ///   - output: where the text goes (default: stderr).
    public init(enabled: Bool = true, interactive: Bool = ProgressLine.standardErrorIsTerminal,
                output: @escaping @Sendable (String) -> Void = ProgressLine.writeToStandardError) {
        self.enabled = enabled
        self.isInteractive = interactive
        self.output = output
        interval = interactive ? 100_000_000 : 5_000_000_000
    }

    /// A line printed as it is, at once, in place of any current state.
    public func note(_ text: String) {
        write(isInteractive ? "\r\u{1B}[K" + text + "\n" : text + "\n")
    }

    /// The current state; shown if enough time has passed since the last one.
    public func update(_ text: String) {
        let now = MonotonicTime.now()
        let show: Bool = state.withLock { state in
            state.pending = text
            guard now - state.lastWrite >= interval else { return false }
            state.lastWrite = now
            if !isInteractive { state.pending = nil }
            return true
        }
        if show { write(isInteractive ? "\r\u{1B}[K" + text : text + "\n") }
    }

    /// Ends the progress by printing the last state for good, so the next output starts
    /// on the line after it.
    public func keepLastState() {
        guard let pending = reset() else { return }
        write(isInteractive ? "\r\u{1B}[K" + pending + "\n" : pending + "\n")
    }

    /// Ends the progress by erasing the line on a terminal, so a report printed next
    /// starts on a clean line. Plain lines already printed stay.
    public func clear() {
        guard reset() != nil, isInteractive else { return }
        write("\r\u{1B}[K")
    }

    /// Forgets the state, so the next update shows at once; returns the state not yet
    /// printed for good (on a terminal, the one on screen).
    private func reset() -> String? {
        state.withLock { state in
            defer { state = State() }
            return state.pending
        }
    }

    private func write(_ text: String) {
        if enabled { output(text) }
    }

    /// Writes `text` to stderr unbuffered.
    public static func writeToStandardError(_ text: String) {
        var bytes = Array(text.utf8)
        HostSystem.writeDescriptor(STDERR_FILENO, &bytes, bytes.count)
    }
}
