import ArgumentParser
import ConformanceHarness
import EventLoop
import MockChatCore

/// `mockchat`: a fake chat/presence server and the conformance harness that tests
/// SDK behaviour against it.
@main
struct MockChatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mockchat",
        abstract: "A fake chat/presence server for testing connection and presence behaviour.",
        discussion: """
            Start a local server with `mockchat serve`, then connect a WebSocket client to
            ws://127.0.0.1:8080/v1/ws (docs/PROTOCOL.md describes every message).
            """,
        version: BuildInfo.description,
        subcommands: [ServeCommand.self, TestCommand.self, ScenariosCommand.self, DriverCommand.self, BenchCommand.self,
                      FuzzCommand.self, FixturesCommand.self, SpecCommand.self, MatrixCommand.self])

    static func main() {
        // `serve` ends on SIGINT/SIGTERM through its watcher; one that arrives before the
        // watcher exists must wait for it rather than kill the process without 1001 closes.
        let command = CommandLine.arguments.dropFirst().first
        if command == "serve" { SignalWatcher.block(ServeCommand.stopSignals) }
        // The commands that start drivers take SIGINT, SIGTERM and SIGHUP from here on (the
        // signals blocked before any thread exists), and end every driver before exiting.
        if ["test", "fuzz", "matrix"].contains(command) { DriverProcessGroups.endAllOnInterrupt() }
        main(nil)
    }
}
