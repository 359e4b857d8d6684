import EventLoop
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `mockchat serve` refuses bad flags and paths with a message instead of crashing or
/// listening somewhere else.
@Suite("serve command line")
struct ServeCommandTests {
    /// Runs the built `mockchat` with `arguments` until it exits; returns its status and stderr.
    func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Robustness.Faults.mockchatBinary,
                                                                  "the mockchat executable is not built"))
        process.arguments = arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test func aPortOutOfRangeIsRefused() throws {
        let (status, stderr) = try run(["serve", "--port", "99999"])
        #expect(status != 0)
        #expect(stderr.contains("--port must be from 0 to 65535, not 99999"))
    }

    @Test func anUnknownLogLevelListsTheValidOnes() throws {
        let (status, stderr) = try run(["serve", "--log-level", "verbose"])
        #expect(status != 0)
        #expect(stderr.contains("'verbose' is invalid for '--log-level"))
        #expect(stderr.contains("debug") && stderr.contains("critical"))
    }

    @Test(arguments: [("/nonexistent-folder/trace.jsonl", "No such file or directory"), ("/", "Is a directory")])
    func anUnwritableTracePathExits2WithTheReason(path: String, reason: String) throws {
        let (status, stderr) = try run(["serve", "--port", "0", "--trace", path])
        #expect(status == 2)
        #expect(stderr.contains("cannot write the trace file '\(path)': \(reason)"))
    }

    /// 2^44 MiB shifted to bytes overflowed to 0, and the server kept no trace at all.
    @Test(arguments: [
        (["--trace-memory", "17592186044416"], "--trace-memory must be an integer from 0 to 1048576 MiB, not 17592186044416"),
        (["--trace-capacity=-1"], "--trace-capacity must be an integer from 0 to 100000000 entries, not -1"),
        (["--cluster", "redis://127.0.0.1:6379", "--node", "a", "--node-ttl", "9223372036854775807"],
         "--node-ttl must be an integer from 30 to 86400000 milliseconds"),
    ])
    func aNumericFlagOutOfRangeIsAUsageError(flags: [String], message: String) throws {
        let (status, stderr) = try run(["serve", "--port", "0"] + flags)
        #expect(status == 64)
        #expect(stderr.contains(message), "\(stderr)")
    }

    /// Each crashed `serve` with a trap (exit 132) before it said what was wrong.
    @Test(arguments: [
        (["--cluster", "http://x", "--node", "a"], "--cluster 'http://x': expected redis://HOST:PORT"),
        (["--cluster", "redis://", "--node", "a"], "--cluster 'redis://': expected redis://HOST:PORT"),
        (["--cluster", "redis://127.0.0.1:99999", "--node", "a"], "with a port from 1 to 65535"),
        (["--cluster", "redis://127.0.0.1:6379", "--node", "a/b"], "--node 'a/b': a name of 1 to 64 letters"),
        (["--cluster", "redis://127.0.0.1:6379", "--node", ""], "--node '': a name of 1 to 64 letters"),
    ])
    func aBadClusterOrNodeIsAUsageError(flags: [String], message: String) throws {
        let (status, stderr) = try run(["serve", "--port", "0"] + flags)
        #expect(status == 64)
        #expect(stderr.contains(message), "\(stderr)")
    }

    /// A start that fails after the loop exists shuts the loop down and says why (it trapped).
    @Test func aPortInUseEndsWithTheReason() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let listener = try TCPListener(loop: loop, address: SocketAddress(host: "127.0.0.1", port: 0)) { _ in }
        defer { listener.close() }
        let port = listener.address.port
        let (status, stderr) = try run(["serve", "--port", "\(port)"])
        #expect(status == 1)
        #expect(stderr.contains("cannot listen on 127.0.0.1:\(port)") && stderr.contains("EADDRINUSE"), "\(stderr)")
    }

    @Test func controlFromAnywhereNeedsAToken() throws {
        let (status, stderr) = try run(["serve", "--port", "0", "--control-from-anywhere"])
        #expect(status != 0)
        #expect(stderr.contains("--control-from-anywhere needs --control-token"))
    }

    /// A signal that arrives while blocked, before the watcher exists, reaches the watcher.
    @Test func aSignalPendingBeforeTheWatcherIsHandledByIt() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        SignalWatcher.block([SIGUSR2])
        raise(SIGUSR2)
        var received: Int32 = 0
        let watcher = SignalWatcher(loop: loop, signals: [SIGUSR2]) { received = $0 }
        #expect(loop.run(timeout: 5) { received != 0 })
        #expect(received == SIGUSR2)
        watcher.close()
    }
}
