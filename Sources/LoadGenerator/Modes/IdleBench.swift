import ChatProtocol
import EventLoop
import Foundation

/// `mockchat bench idle`: how many logged-in idle connections the server holds, what
/// each costs in resident memory, and how fast they connect and log in.
///
/// The connections are opened by this process, or split over `processes` worker
/// processes (`mockchat bench idle --worker`), because a process may hold only as
/// many sockets as its hard open-file limit allows. Connections are bound in turn to
/// the source addresses given, so no single (source, destination) pair runs out of
/// ephemeral ports. The server's RSS is read before the ramp and after a short hold;
/// the measured window spans the same time, and the generator's CPU time in it includes
/// its workers'.
/// Given a cluster's nodes, connection i goes to node i mod n, and the memory and open
/// files are the nodes' sums.
public final class IdleBench {
    public struct Options: Sendable {
        public var worker = IdleWorker.Options()
        public var processes = 1
        /// Seconds to keep the connections open before the memory is read.
        public var hold: Double = 3
        public init() {}
    }

    private let loop: EventLoop
    private let target: BenchTarget
    private let options: Options
    private let progress: ProgressLine

    public init(loop: EventLoop, target: BenchTarget, options: Options) {
        self.loop = loop
        self.target = target
        self.options = options
        progress = ProgressLine(enabled: target.showProgress)
    }

    /// Runs the benchmark and returns its report.
    public func run() -> BenchReport {
        let servers = target.servers
        let rssBefore = servers.total { $0.residentBytes() }
        let fdsBefore = servers.total { $0.openFileCount() }
        let startSample = WindowSample.take(servers: servers)
        var outcomes: [IdleWorker.Outcome] = []
        var rssAfter: Int?
        var fdsAfter: Int?
        var endSample = startSample
        var notes: [String] = []
        /// Reads the servers' memory and ends the measured window, while the connections
        /// (and the worker processes holding them) are still up.
        func readWhileHeld(workers: [ProcessProbe] = []) {
            rssAfter = servers.total { $0.residentBytes() }
            fdsAfter = servers.total { $0.openFileCount() }
            endSample = WindowSample.take(servers: servers, workers: workers)
        }
        if options.processes <= 1 {
            let worker = IdleWorker(loop: loop, target: target, options: options.worker)
            worker.start(progress: progress) { outcome in
                outcomes.append(outcome)
                self.loop.stop()
            }
            loop.run()
            progress.update("idle: holding \(worker.openCount) connections for \(options.hold) s")
            loop.run(timeout: options.hold) { false }
            readWhileHeld()
            let held = worker.openCount
            if held < outcomes.first?.loggedIn ?? 0 {
                notes.append("\((outcomes.first?.loggedIn ?? 0) - held) connections closed during the hold")
            }
            worker.closeAll()
        } else {
            let pool = IdleWorkerPool(target: target, options: options)
            let result = pool.run(progress: progress) { workers in
                progress.update("idle: holding for \(self.options.hold) s")
                Thread.sleep(forTimeInterval: self.options.hold)
                readWhileHeld(workers: workers)
            }
            outcomes = result.outcomes
            notes += result.problems
        }
        progress.clear()
        return makeReport(outcomes: outcomes, rssBefore: rssBefore, rssAfter: rssAfter, fdsBefore: fdsBefore,
                          fdsAfter: fdsAfter, window: MeasuredWindow(start: startSample, end: endSample), notes: notes)
    }

    private func makeReport(outcomes: [IdleWorker.Outcome], rssBefore: Int?, rssAfter: Int?, fdsBefore: Int?,
                            fdsAfter: Int?, window: MeasuredWindow, notes: [String]) -> BenchReport {
        var notes = notes
        let loggedIn = outcomes.map(\.loggedIn).reduce(0, +)
        let failed = outcomes.map(\.failed).reduce(0, +)
        var failures: [String: Int] = [:]
        for outcome in outcomes { failures.merge(outcome.failures, uniquingKeysWith: +) }
        if !failures.isEmpty {
            notes.append("failed logins: " + LoginRamp.describe(failures))
        }
        let started = outcomes.map(\.startedAt).min() ?? 0
        let finished = outcomes.map(\.finishedAt).max() ?? 0
        let rampSeconds = MonotonicTime.seconds(from: started, to: finished)
        let perConnection = BenchMath.bytesPerConnection(before: rssBefore, after: rssAfter, connections: loggedIn)
        let limits = target.server?.openFileLimits()
        if let limits {
            notes.append("the server may hold \(limits.hard) file descriptors (hard limit; soft \(limits.soft)): "
                + "with its listener, loop and standard descriptors that caps it just under \(limits.hard) connections")
        }
        let requested = options.worker.connections
        let settings = BenchReport.Section("settings", "Settings", [
            target.serverFigure(),
            .init("connections", .integer(Int64(requested)), "connections"),
            .init("processes", .integer(Int64(max(1, options.processes))), "generator processes"),
            .init("sources", .string(target.sourceHosts.isEmpty ? "kernel's choice" : target.sourceHosts.joined(separator: ",")),
                  "source addresses"),
            .init("holdSeconds", .figure(options.hold, places: 3), "hold", unit: "s"),
        ])
        let results = BenchReport.Section("results", "Results", [
            .init("loggedIn", .integer(Int64(loggedIn)), "logged in"),
            .init("failed", .integer(Int64(failed)), "failed"),
            .init("rampSeconds", .figure(rampSeconds, places: 3), "ramp", unit: "s"),
            .init("loginRate", .figure(BenchMath.rate(loggedIn, seconds: rampSeconds), places: 1),
                  "connect + login rate", unit: "connections/s"),
            .init("serverRSSBeforeBytes", rssBefore.map { .integer(Int64($0)) } ?? .null, "server RSS before", unit: "bytes"),
            .init("serverRSSAfterBytes", rssAfter.map { .integer(Int64($0)) } ?? .null, "server RSS held", unit: "bytes"),
            .init("serverRSSPerConnectionBytes", .figure(perConnection, places: 0), "server RSS per connection", unit: "bytes"),
            .init("serverOpenFiles", fdsAfter.map { .integer(Int64($0)) } ?? .null, "server open files while held"),
            .init("serverOpenFilesBefore", fdsBefore.map { .integer(Int64($0)) } ?? .null, "server open files before"),
            .init("serverFileLimit", limits.map { .integer(Int64($0.hard)) } ?? .null, "server open-file limit"),
        ])
        return BenchReport(mode: "idle", sections: [settings, results, window.hostSection], notes: notes,
                           completed: loggedIn > 0)
    }
}
