import ArgumentParser
import Foundation
import MockChatCore
import ProtocolFuzzer

/// `mockchat fuzz`: seeded, reproducible fuzzing of the server.
struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract: "Fuzz the server: random histories against a reference model, and malformed wire input.",
        discussion: """
            model: random histories of logins, reconnects, device conflicts, drops, quiet
            periods, faults and settings changes over several users and devices, each run
            against a fresh in-process server and checked after every step against an
            independent reference model. A divergence is shrunk to a minimal history and
            written to --out as a scenario that `mockchat test FILE` replays.

            wire: malformed handshakes and frames, random and mutated JSON, junk bytes,
            sometimes delivered one byte at a time. Each must get its documented answer,
            and a control client must stay served.

            sdk (--sdk COMMAND or --sdk-listen HOST:PORT): random histories of an app and
            its environment, run through the SDK's driver (docs/DRIVER.md) and through the
            built-in reference model against fresh servers, and compared: connection
            events, call results and error codes, socket attempts with their times,
            presence events (docs/FUZZING.md). A difference, or a driver that crashes,
            hangs or writes junk, is shrunk and written to --out as a scenario that
            `mockchat test FILE --sdk COMMAND` replays.

            The same seed and --jobs give the same run. A progress line goes to stderr; the
            summary ends with the seed. Exit status 1 on any divergence or crash (a server
            that stops answering its control client). The server runs in this process, so
            a fatal error ends the run; the seed is printed first so it can be repeated.
            """)

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case model, wire, both, inputs
    }

    @Option(help: "model, wire, both, or inputs (control API, recordings, scenario files, driver lines, flags).")
    var mode: Mode = .both

    @Option(help: "Seed of the run (default: from the clock, printed at the start and in the summary).")
    var seed: UInt64?

    @Option(help: "Model-mode actions to run (default 20000, or no limit with --seconds).")
    var steps: Int?

    @Option(help: "Wire-mode inputs to send (default 100000, or no limit with --seconds).")
    var inputs: Int?

    @Option(help: "Stop after this many seconds (shared by the modes with --mode both).")
    var seconds: Double?

    @Option(help: "Folder for shrunk scenarios.")
    var out: String = "fuzz-out"

    @Option(help: "With --mode inputs: run the regression files (a file or a folder of *.json) again; exit 1 on any finding.")
    var replay: String?

    @Option(help: "With --mode inputs: shrink input N of --seed (the one a crash note names), each candidate run in a child process, and write it to --out as a regression file.")
    var shrink: Int?

    @Option(help: "Actions per history (a fresh server each; default 200 for model, 40 with --sdk).")
    var historyLength: Int?

    /// `--sdk COMMAND` or `--sdk-listen HOST:PORT` fuzzes that SDK (docs/FUZZING.md).
    @OptionGroup var driver: DriverOptions

    @Flag(help: "With --sdk: end the run at the first difference, once it is shrunk.")
    var stopAtFirst = false

    @Option(help: ArgumentHelp("With --sdk: another driver of the same SDK; differences it shows too are known, not reported.",
                               valueName: "command"))
    var baseline: String?

    @Option(help: "With --sdk: kinds of difference to shrink and write (default 3); the rest are counted.")
    var maxFindings: Int = 3

    @Option(help: "With --sdk: also write the summary as JSON to this file.")
    var json: String?

    @Option(help: "With --sdk: the SDK's manifest (docs/SPECIFICATION.md; default: the one in the driver's hello). The model takes its values; waived rules are not reported.")
    var manifest: String?

    @Option(help: "Model histories run at once, and wire workers (default: the number of cores).")
    var jobs: Int?

    func validate() throws {
        try checkFlags { () throws(BoundedNumberError) in
            // A crash names the input of each worker: one note per worker, 64 at most.
            _ = try BoundedNumber.check(jobs ?? 1, "--jobs", in: 1...64, unit: "workers")
            _ = try BoundedNumber.check(seconds ?? 1, "--seconds", in: 0.001...BoundedNumber.yearSeconds, unit: "seconds")
            _ = try BoundedNumber.check(steps ?? 1, "--steps", in: 1...Int.max, unit: "actions")
            _ = try BoundedNumber.check(inputs ?? 1, "--inputs", in: 1...Int.max, unit: "inputs")
            _ = try BoundedNumber.check(historyLength ?? 1, "--history-length", in: 1...100_000, unit: "actions")
            _ = try BoundedNumber.check(shrink ?? 0, "--shrink", in: 0...Int.max, unit: "(an input's index)")
        }
    }

    /// Runs one wire campaign (frames or other inputs) with `--jobs`, its progress on one line.
    private func runWire(_ options: WireFuzzer.Options, label: String, findings: String,
                         progress: ProgressLine) -> WireFuzzer.Report {
        var options = options
        if let jobs { options.jobs = jobs }
        let report = WireFuzzer(options: options).run { snapshot in
            let rate = Double(snapshot.steps) / max(snapshot.elapsedSeconds, 0.001)
            let target = snapshot.target == Int.max ? "" : "/\(snapshot.target)"
            progress.update(String(format: "%@: %d%@ inputs, %.0f inputs/s, %d %@, %d crashes",
                                   label, snapshot.steps, target, rate, snapshot.divergences, findings, snapshot.crashes))
        }
        progress.keepLastState()
        return report
    }

    func run() throws {
        let seed = seed ?? UInt64(Date().timeIntervalSince1970 * 1000)
        if driver.namesDriver { return try runSDK(seed: seed) }
        if mode == .inputs, let replay { return try Self.replay(replay) }
        if mode == .inputs, let shrink { return try shrinkInput(shrink, seed: seed) }
        let started = Date()
        let progress = ProgressLine()
        progress.note("mockchat fuzz: mode \(mode.rawValue), seed \(seed)")
        var lines: [String] = []
        var failed = false
        var modelReport: ModelFuzzer.Report?
        var wireReport: WireFuzzer.Report?

        if mode == .inputs {
            var options = Self.inputOptions()
            options.outputFolder = out
            options.seed = seed
            options.steps = inputs ?? (seconds == nil ? 20_000 : Int.max)
            options.seconds = seconds
            let report = runWire(options, label: "inputs", findings: "findings", progress: progress)
            lines += FuzzSummary.wire(report, name: "inputs")
            failed = report.divergences > 0 || report.crashes > 0
        }
        if mode != .wire && mode != .inputs {
            var options = ModelFuzzer.Options()
            options.seed = seed
            options.steps = steps ?? (seconds == nil ? 20_000 : Int.max)
            options.seconds = seconds.map { mode == .both ? $0 / 2 : $0 }
            options.historyLength = max(1, historyLength ?? 200)
            options.outputFolder = out
            if let jobs { options.jobs = jobs }
            let report = ModelFuzzer(options: options).run { snapshot in
                let rate = Double(snapshot.steps) / max(snapshot.elapsedSeconds, 0.001)
                let target = snapshot.target == Int.max ? "" : "/\(snapshot.target)"
                progress.update(String(format: "model: %d%@ steps, %.0f steps/s, %d divergences, %d crashes%@",
                                       snapshot.steps, target, rate, snapshot.divergences, snapshot.crashes,
                                       snapshot.shrinking ? " (shrinking)" : ""))
            }
            progress.keepLastState()
            modelReport = report
            failed = failed || report.divergences > 0 || report.crashes > 0
        }
        if mode == .wire || mode == .both {
            var options = WireFuzzer.Options()
            options.seed = seed
            options.steps = inputs ?? (seconds == nil ? 100_000 : Int.max)
            if let seconds { options.seconds = max(1, seconds - Date().timeIntervalSince(started)) }
            let report = runWire(options, label: "wire", findings: "divergences", progress: progress)
            wireReport = report
            failed = failed || report.divergences > 0 || report.crashes > 0
        }

        if let report = modelReport { lines += FuzzSummary.model(report) }
        if let report = wireReport { lines += FuzzSummary.wire(report) }
        lines.append(String(format: "fuzz: %@, %.1f s wall time, seed %llu", failed ? "FAILED" : "passed",
                            Date().timeIntervalSince(started), seed))
        print(lines.joined(separator: "\n"))
        if failed { throw ExitCode(1) }
    }
}
