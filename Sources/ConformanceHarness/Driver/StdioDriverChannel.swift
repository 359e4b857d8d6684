import ChatProtocol
import Foundation
import Synchronization

import CSystemMemory
import MockChatCore

/// A driver spawned as `/bin/sh -c COMMAND`, one per scenario: JSON lines on its stdin
/// and stdout; its stderr is kept for failure reports. It runs in its own process group,
/// which ``DriverProcessGroups`` ends once the driver exits, is abandoned, or is still
/// running ``DriverProcessGroups/graceSeconds`` after its stdin closed, so that nothing
/// the command started outlives its scenario.
public final class StdioDriverChannel: DriverChannel {
    public let command: String
    public let inbox = DriverInbox()
    public var hello: JSONValue?
    private let pid: pid_t
    private var stdinFD: Int32
    private let stderrLines: StderrTail
    /// The process's exit, once it has been reaped.
    private let exited = DriverExit()
    /// Signalled once stderr has reached its end.
    private let stderrEnded = DispatchSemaphore(value: 0)

    /// Held while a driver is spawned and registered; an interrupt's handler takes it too,
    /// so a driver is either started before (and ended by it) or not started at all.
    static let spawnLock = NSLock()

    /// Lines of stderr kept for reports.
    static let stderrLineCount = 20

    /// The longest line a driver may write to stdout, in bytes (docs/DRIVER.md).
    public static let maxLineBytes = 1 << 20

    public init(command: String) throws(ScenarioError) {
        self.command = command
        // A driver may die while a request is on its way: the write must fail with EPIPE
        // (reported with the driver's exit status) rather than end the harness.
        signal(SIGPIPE, SIG_IGN)
        Self.spawnLock.lock()
        defer { Self.spawnLock.unlock() }
        guard !DriverProcessGroups.isInterrupted else { throw ScenarioError("the run was interrupted") }
        // The pipes are close-on-exec from the start, so a process another thread starts
        // meanwhile never holds a driver's pipe end.
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0], errors: [Int32] = [0, 0]
        guard mockchat_cloexec_pipe(&input) == 0, mockchat_cloexec_pipe(&output) == 0, mockchat_cloexec_pipe(&errors) == 0 else {
            throw ScenarioError("cannot create pipes for driver '\(command)': \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        // A driver gets stdin, stdout and stderr and nothing else: a descriptor this process
        // inherited without close-on-exec (such as the one a parent watches to learn that
        // this process has exited) must not outlive it in a driver.
        _ = mockchat_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own group, an empty signal mask and the interrupt signals and SIGPIPE at their
        // default action: what this process blocks or ignores for itself is not inherited.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var mask = sigset_t(), defaults = sigset_t()
        sigemptyset(&mask)
        sigemptyset(&defaults)
        for number in DriverProcessGroups.interruptSignals + [SIGPIPE] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        defer { arguments.forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, "/bin/sh", &actions, &attributes, arguments, environ)
        close(input[0])
        close(output[1])
        close(errors[1])
        guard status == 0 else {
            close(input[1])
            close(output[0])
            close(errors[0])
            throw ScenarioError("cannot start driver '\(command)': \(String(cString: strerror(status)))")
        }
        pid = child
        stdinFD = input[1]
        stderrLines = StderrTail(limit: Self.stderrLineCount)
        DriverProcessGroups.register(child)
        let inbox = inbox, stdoutFD = output[0], stderrFD = errors[0], tail = stderrLines, spawned = child
        let exited = exited, stderrEnded = stderrEnded
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) < 0 && errno == EINTR {}
            exited.record(status)
            // The driver is gone: whatever it started (and left holding its stdout) goes too.
            DriverProcessGroups.end(spawned)
        }
        Thread.detachNewThread {
            Self.readLines(stdoutFD, limit: Self.maxLineBytes) { piece in
                switch piece {
                case .line(let bytes): inbox.push(.message(bytes))
                case .overlong: inbox.push(.overlong(limit: Self.maxLineBytes))
                }
            }
            close(stdoutFD)
            inbox.push(.closed(Self.describe(exitStatus: exited.wait())))
        }
        Thread.detachNewThread {
            Self.readLines(stderrFD, limit: Self.maxLineBytes) { piece in
                if case .line(let bytes) = piece { tail.append(String(decoding: bytes.prefix(300), as: UTF8.self)) }
            }
            close(stderrFD)
            stderrEnded.signal()
        }
    }

    public var label: String { "'\(command)'" }

    public var helloTimeout: Double? { nil }

    public var outlivesScenarios: Bool { false }

    /// Asked for when the driver failed, after it was killed or exited: its last words may
    /// still be on their way through the pipe, so this waits up to a second for the end
    /// of stderr.
    public var stderrTail: [String] {
        if stderrEnded.wait(timeout: .now() + 1) == .success { stderrEnded.signal() }
        return stderrLines.lines
    }

    public func send(_ message: JSONValue) -> Bool {
        guard stdinFD >= 0 else { return false }
        var bytes: [UInt8] = []
        message.serialize(into: &bytes)
        bytes.append(10)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(stdinFD, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Closes the driver's stdin; a driver still running 2 s later has its process
    /// group ended (SIGTERM, then SIGKILL 2 s after).
    public func finish() {
        guard stdinFD >= 0 else { return }
        close(stdinFD)
        stdinFD = -1
        let exited = exited, group = pid
        Thread.detachNewThread {
            if !exited.wait(seconds: DriverProcessGroups.graceSeconds) {
                DriverProcessGroups.end(group)
            }
        }
    }

    public func abandon() {
        if stdinFD >= 0 {
            close(stdinFD)
            stdinFD = -1
        }
        DriverProcessGroups.endAtOnce(pid)
    }

    /// Reads `fd` to its end, passing each line (without its newline) or the news of
    /// one longer than `limit`; a last line without a newline is passed too.
    private static func readLines(_ fd: Int32, limit: Int, _ emit: (LineSplitter.Piece) -> Void) {
        var splitter = LineSplitter(limit: limit)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            splitter.push(buffer[..<count], emit)
        }
        splitter.finish(emit)
    }

    private static func describe(exitStatus status: Int32) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "exited with status \((status >> 8) & 0xff)" }
        return signal == SIGKILL ? "was killed" : "was killed by signal \(signal)"
    }
}

/// The last lines a driver wrote to stderr; filled by a reader thread.
final class StderrTail: Sendable {
    private let state = Mutex<[String]>([])
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    func append(_ line: String) {
        state.withLock { lines in
            lines.append(String(line.prefix(300)))
            if lines.count > limit { lines.removeFirst(lines.count - limit) }
        }
    }

    var lines: [String] { state.withLock { $0 } }
}

/// A driver process's exit status, once it is known; several threads wait for it.
final class DriverExit: Sendable {
    private let done = DispatchGroup()
    private let status = Mutex<Int32>(0)

    init() { done.enter() }

    func record(_ status: Int32) {
        self.status.withLock { $0 = status }
        done.leave()
    }

    /// Waits for the exit; its status.
    func wait() -> Int32 {
        done.wait()
        return status.withLock { $0 }
    }

    /// Waits up to `seconds`; whether the process exited.
    func wait(seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }
}
