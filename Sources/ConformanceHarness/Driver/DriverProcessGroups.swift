import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The one owner of the process groups of the drivers this process started
/// (docs/DRIVER.md, "Transports"): each stdio driver runs in a group of its own, and
/// every group is ended (SIGTERM, then SIGKILL to whatever is left ``graceSeconds``
/// later) once its scenario is over, and in any case before the harness exits, also
/// when it is interrupted. A process the driver started stays in its group, so it is
/// ended with it even when it keeps the driver's stdout open.
public enum DriverProcessGroups {
    /// Seconds between SIGTERM and SIGKILL (docs/DRIVER.md).
    public static let graceSeconds = 2.0

    private static let live = Mutex<Set<pid_t>>([])

    /// A group the harness started and must end.
    static func register(_ group: pid_t) {
        _ = live.withLock { $0.insert(group) }
    }

    /// The groups not yet ended.
    public static var registered: [pid_t] { live.withLock { Array($0) } }

    /// Ends `group`: SIGTERM to every process in it, SIGKILL to those still there
    /// `grace` seconds later; returns once none is left (or a second after the KILL).
    static func end(_ group: pid_t, grace: Double = graceSeconds) {
        end([group], grace: grace)
    }

    /// Ends every group still registered, as ``end(_:grace:)`` does, all at once.
    /// Called before the harness exits.
    /// A driver whose spawn has returned but is not yet registered is ended too: every
    /// child of this process that leads a group of its own is a driver.
    /// Once an interrupt is being handled, the caller waits here for the handler to end
    /// the process by the signal: a run that ends because its drivers went must not exit
    /// first with a status of its own.
    public static func endAll(grace: Double = graceSeconds) {
        end(groupsToEnd, grace: grace)
        while interrupted.withLock({ $0 }) { sleep(60) }
    }

    /// The groups a run ends: those registered, and every child leading a group of its own
    /// (a driver spawned but not yet registered).
    private static var groupsToEnd: [pid_t] { Array(Set(registered).union(childGroupLeaders())) }

    /// Ends `group` without a grace period (a driver that misbehaved): SIGKILL at once.
    static func endAtOnce(_ group: pid_t) {
        _ = Glibc.kill(-group, SIGKILL)
        end(group, grace: 0)
    }

    private static func end(_ groups: [pid_t], grace: Double) {
        guard !groups.isEmpty else { return }
        for group in groups { _ = Glibc.kill(-group, SIGTERM) }
        var left = waitUntilEmpty(groups, seconds: grace)
        for group in left { _ = Glibc.kill(-group, SIGKILL) }
        left = waitUntilEmpty(left, seconds: 1)
        live.withLock { live in for group in groups where !left.contains(group) { live.remove(group) } }
    }

    /// The groups that still have a running member after waiting up to `seconds`.
    private static func waitUntilEmpty(_ groups: [pid_t], seconds: Double) -> [pid_t] {
        let deadline = Date().addingTimeInterval(seconds)
        var left = groups
        while true {
            let running = runningGroups()
            left = left.filter(running.contains)
            if left.isEmpty || Date() >= deadline { return left }
            usleep(10_000)
        }
    }

    /// The process groups that have a member that is not a zombie (a zombie left to an
    /// init that does not reap is already gone), read from /proc.
    public static func runningGroups() -> Set<pid_t> {
        Set(livingProcesses().map(\.group))
    }

    /// This process's children that lead a process group of their own.
    static func childGroupLeaders() -> Set<pid_t> {
        let me = getpid()
        return Set(livingProcesses().filter { $0.parent == me && $0.group == $0.pid }.map(\.pid))
    }

    /// Every process that is not a zombie, with its parent and group, read from /proc.
    private static func livingProcesses() -> [(pid: pid_t, parent: pid_t, group: pid_t)] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry in
            guard let pid = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // After "pid (comm) ": state, ppid, pgrp, ...
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, fields[0] != "Z", let parent = pid_t(fields[1]), let group = pid_t(fields[2])
            else { return nil }
            return (pid, parent, group)
        }
    }

    /// The signals that interrupt a run: each ends every driver group first.
    public static let interruptSignals = [SIGINT, SIGTERM, SIGHUP]

    /// Until the process exits: SIGINT, SIGTERM and SIGHUP end every driver group
    /// (drivers run in groups of their own, so a terminal's Ctrl-C does not reach them)
    /// and then end this process as the signal would have.
    ///
    /// The signals are blocked on the calling thread, and a signal source (a signalfd
    /// under libdispatch) takes them while pending. Call it first thing in `main`, before
    /// any other thread exists: threads inherit the mask, so no thread can take a signal
    /// in its place, and one that arrives before the source exists waits for it. A driver
    /// starts with an empty mask and these signals (and SIGPIPE) at their default action
    /// (``StdioDriverChannel``), so the harness's own handling never reaches it.
    public static func endAllOnInterrupt() {
        installed.withLock { installed in
            guard !installed else { return }
            installed = true
            var blocked = sigset_t()
            sigemptyset(&blocked)
            for number in interruptSignals { sigaddset(&blocked, number) }
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            for number in interruptSignals {
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { endAllAndDie(of: number) }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Ends every driver group, then this process with `number` at its default action
    /// (so a shell reports the signal), from the source's thread.
    private static func endAllAndDie(of number: Int32) -> Never {
        StdioDriverChannel.spawnLock.lock()
        interrupted.withLock { $0 = true }
        StdioDriverChannel.spawnLock.unlock()
        end(groupsToEnd, grace: graceSeconds)
        signal(number, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, number)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(number)
        exit(128 + number)
    }

    private static let installed = Mutex(false)
    /// Set when an interrupt's handler has begun: no driver starts after it.
    private static let interrupted = Mutex(false)
    static var isInterrupted: Bool { interrupted.withLock { $0 } }
    /// Kept alive for the life of the process; changed only under `installed`.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
}
