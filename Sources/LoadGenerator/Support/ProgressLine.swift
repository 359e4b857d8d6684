import Glibc

/// A one-line status on stderr, rewritten in place on a terminal and printed as plain
/// lines otherwise (so logs of CI runs stay readable).
public final class ProgressLine {
    private let enabled: Bool
    private let interactive = isatty(STDERR_FILENO) == 1
    private var shown = false

    public init(enabled: Bool) { self.enabled = enabled }

    /// Shows `text` as the current status.
    public func update(_ text: String) {
        guard enabled else { return }
        write(interactive ? "\r\u{1B}[K" + text : text + "\n")
        shown = true
    }

    /// Clears the status line before the report is printed.
    public func finish() {
        guard enabled, interactive, shown else { return }
        write("\r\u{1B}[K")
    }

    private func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.write(STDERR_FILENO, &bytes, bytes.count)
    }
}
