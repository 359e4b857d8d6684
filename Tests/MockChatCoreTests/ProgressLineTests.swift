import MockChatCore
import Synchronization
import Testing

@Suite("Progress line")
struct ProgressLineTests {
    /// Collects what a progress line writes.
    final class Output: Sendable {
        private let text = Mutex("")
        var written: String { text.withLock { $0 } }
        func append(_ more: String) { text.withLock { $0 += more } }
    }

    @Test("off a terminal: plain lines, no carriage returns, the last state kept")
    func plainLines() {
        let output = Output()
        let progress = ProgressLine(interactive: false, output: output.append)
        progress.note("FAIL a/b")
        progress.update("1 of 3")
        progress.update("2 of 3")
        progress.keepLastState()
        #expect(output.written == "FAIL a/b\n1 of 3\n2 of 3\n")
    }

    @Test("on a terminal: rewritten in place, then cleared or kept")
    func inPlace() {
        let output = Output()
        let progress = ProgressLine(interactive: true, output: output.append)
        progress.update("1 of 3")
        progress.clear()
        progress.update("2 of 3")
        progress.keepLastState()
        #expect(output.written == "\r\u{1B}[K1 of 3\r\u{1B}[K\r\u{1B}[K2 of 3\r\u{1B}[K2 of 3\n")
    }

    @Test("disabled: nothing at all")
    func disabled() {
        let output = Output()
        let progress = ProgressLine(enabled: false, interactive: true, output: output.append)
        progress.note("note")
        progress.update("state")
        progress.keepLastState()
        #expect(output.written.isEmpty)
    }
}
