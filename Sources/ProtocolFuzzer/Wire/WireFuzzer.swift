import Dispatch
import EventLoop
import Foundation
import Synchronization

/// Wire mode: malformed handshakes and frames, random and mutated requests and junk
/// bytes, some delivered one byte at a time. Each input must get its documented
/// answer (an HTTP status, a close code, an error reply on a connection that stays
/// open), and every ``Options/healthEvery`` inputs a control client must still get
/// its ping answered, with no connection leaked.
///
/// Inputs are spread over ``Options/jobs`` workers, each with its own loop, server and
/// control client: input N goes to worker N mod jobs. Every input has its own seed,
/// derived from the run's seed and N, so the same seed and job count give the same
/// run, and input N's bytes are the same whatever `--inputs` says.
public struct WireFuzzer: Sendable {
    /// The campaign's options (``FuzzCampaign/Options``, read by name: `options.seed`;
    /// its `steps` are inputs here) and the wire's own.
    public struct Options: FuzzCampaignPart, Sendable {
        public var campaign = FuzzCampaign.Options(steps: 100_000)
        /// Inputs (per worker) between two health checks.
        public var healthEvery = 500
        /// Share of inputs sent one byte per write.
        public var oneByteShare = 0.02
        /// Share of incomplete handshakes left to the 10 s handshake deadline.
        public var deadlineShare = 0.1
        /// Weights of the stages: handshake, frames, message.
        public var handshakeWeight = 20, framesWeight = 20, messageWeight = 60
        /// Weights of the other ways in (none in wire mode; see ``inputs()``): control API
        /// requests, recordings, scenario files, driver lines, command lines.
        public var controlWeight = 0, recordingWeight = 0, scenarioWeight = 0, driverWeight = 0, flagsWeight = 0, manifestWeight = 0
        /// How the inputs read in process are checked (recordings and command lines need
        /// code above this module).
        public var surfaces = SurfaceRunner()
        /// Option names of each `mockchat` subcommand, for command-line inputs.
        public var commands: [(name: String, options: [String])] = []
        /// Seconds to shrink each new kind of finding of the other ways in (0: none);
        /// the shrunk input is written to the output folder as an ``InputRegression``.
        public var shrinkBudgetSeconds = 0.0
        public init() {}

        public static var shared: WritableKeyPath<Self, FuzzCampaign.Options> { \.campaign }

        /// Every way in but the wire: `mockchat fuzz --mode inputs`.
        public static func inputs() -> Options {
            var options = Options()
            (options.handshakeWeight, options.framesWeight, options.messageWeight) = (0, 0, 0)
            (options.controlWeight, options.recordingWeight, options.scenarioWeight) = (40, 20, 15)
            (options.driverWeight, options.flagsWeight, options.manifestWeight) = (15, 10, 5)
            options.shrinkBudgetSeconds = 30
            return options
        }
    }

    /// The campaign's counts (``FuzzCampaign/Tally``, read by name: `report.steps`, the
    /// inputs run, and `report.stepsByKind`, by the generator's label), the connections
    /// used, and one line per kind of divergence (its first occurrence) with a count.
    public struct Report: FuzzCampaignPart, Sendable {
        public var tally: FuzzCampaign.Tally
        public var connections = 0
        public var findings: [String] = []

        public init(seed: UInt64) { tally = FuzzCampaign.Tally(seed: seed) }

        public static var shared: WritableKeyPath<Self, FuzzCampaign.Tally> { \.tally }
    }

    public typealias Progress = FuzzCampaign.Progress

    /// What one worker found.
    private struct Partial: Sendable {
        var inputs = 0
        var connections = 0
        var divergences = 0
        var inputsByKind: [String: Int] = [:]
        /// Per kind of divergence: the first input showing it, its description, how many.
        var findings: [String: (index: Int, line: String, count: Int)] = [:]
        var crashMessages: [String] = []
    }

    public var options: Options
    public let roster: Roster

    public init(options: Options, roster: Roster = .embedded()) {
        self.options = options
        self.roster = roster
    }

    /// The seed of input `index` of a run.
    public static func inputSeed(_ seed: UInt64, index: Int) -> UInt64 {
        var mixer = SplitMix64(seed: seed ^ (UInt64(bitPattern: Int64(index)) &* 0xD1B5_4A32_D192_ED03))
        return mixer.next()
    }

    /// Input `index` of the run with this seed: its label and bytes.
    public func input(index: Int) -> (label: String, bytes: [UInt8]) {
        var random = FuzzRandom(seed: Self.inputSeed(options.seed, index: index))
        let input = make(&random)
        return (input.label, input.bytes)
    }

    public func run(progress: @Sendable (Progress) -> Void = { _ in }) -> Report {
        let started = Stopwatch()
        let jobs = max(1, min(options.jobs, options.steps))
        CrashNote.install
        let shared = Mutex((inputs: 0, divergences: 0, crashes: 0))
        let partials = Mutex([Partial](repeating: Partial(), count: jobs))
        DispatchQueue.concurrentPerform(iterations: jobs) { worker in
            let partial = runWorker(worker, of: jobs, started: started) { inputs, divergences, crashes in
                let totals = shared.withLock { totals in
                    totals.inputs += inputs
                    totals.divergences += divergences
                    totals.crashes += crashes
                    return totals
                }
                var tally = FuzzCampaign.Tally(seed: options.seed)
                (tally.steps, tally.divergences, tally.crashes) = totals
                progress(Progress(tally, target: options.steps, elapsedSeconds: started.elapsedSeconds))
            }
            partials.withLock { $0[worker] = partial }
        }
        var report = Report(seed: options.seed)
        var findings: [String: (index: Int, line: String, count: Int)] = [:]
        for partial in partials.withLock({ $0 }) {
            report.steps += partial.inputs
            report.connections += partial.connections
            report.divergences += partial.divergences
            report.crashes += partial.crashMessages.count
            report.crashMessages += partial.crashMessages
            report.stepsByKind.merge(partial.inputsByKind, uniquingKeysWith: +)
            for (key, entry) in partial.findings {
                if let known = findings[key] {
                    findings[key] = known.index < entry.index ? (known.index, known.line, known.count + entry.count)
                                                              : (entry.index, entry.line, known.count + entry.count)
                } else {
                    findings[key] = entry
                }
            }
        }
        report.findings = findings.values.sorted { $0.index < $1.index }.map { $0.count > 1 ? "\($0.count) × \($0.line)" : $0.line }
        report.wallSeconds = started.elapsedSeconds
        progress(Progress(report.tally, target: options.steps, elapsedSeconds: report.wallSeconds))
        return report
    }

    /// Runs inputs `worker`, `worker + jobs`, ... on a server of its own.
    private func runWorker(_ worker: Int, of jobs: Int, started: Stopwatch,
                           tally: (_ inputs: Int, _ divergences: Int, _ crashes: Int) -> Void) -> Partial {
        var partial = Partial()
        let runner: WireRunner
        do {
            runner = try WireRunner(seed: Self.inputSeed(options.seed, index: -1 - worker), roster: roster)
        } catch {
            partial.crashMessages.append("worker \(worker) cannot start a server: \(error)")
            tally(0, 0, 1)
            return partial
        }
        defer {
            CrashNote.clear(worker)
            runner.shutdown()
        }
        runner.surfaces = options.surfaces
        if let failure = runner.startControl() {
            partial.crashMessages.append("worker \(worker): \(failure)")
            tally(0, 0, 1)
            return partial
        }
        var pending = (inputs: 0, divergences: 0)
        var index = worker
        while options.campaign.goesOn(at: index, elapsedSeconds: started.elapsedSeconds) {
            var random = FuzzRandom(seed: Self.inputSeed(options.seed, index: index))
            let input = make(&random)
            CrashNote.set(worker, "input \(index) (\(input.label)) of this seed (one of the inputs of the workers running then)")
            let deadlineTest = input.expectation == .silence && random.chance(options.deadlineShare)
            let problems = runner.run(input, deadlineTest: deadlineTest)
            partial.inputs += 1
            pending.inputs += 1
            partial.inputsByKind[input.label, default: 0] += 1
            if !problems.isEmpty {
                partial.divergences += 1
                pending.divergences += 1
                let key = input.label + " " + Self.kind(of: problems[0])
                if let known = partial.findings[key] {
                    partial.findings[key] = (known.index, known.line, known.count + 1)
                } else {
                    var line = "input \(index) (\(input.label)\(input.oneByteAtATime ? ", one byte at a time" : "")): "
                        + problems.joined(separator: "; ") + "; sent " + Self.escape(input.bytes)
                    if let shrunk = shrinkFinding(input, problem: problems[0], index: index, runner: runner) { line += "; " + shrunk }
                    partial.findings[key] = (index, line, 1)
                }
            }
            if partial.inputs % options.healthEvery == 0, let failure = runner.healthCheck() {
                partial.crashMessages.append("after input \(index) (\(input.label)): \(failure)")
                tally(pending.inputs, pending.divergences, 1)
                return partial
            }
            if pending.inputs == 64 {
                tally(pending.inputs, pending.divergences, 0)
                pending = (0, 0)
            }
            index += jobs
        }
        if let failure = runner.healthCheck() {
            partial.crashMessages.append("worker \(worker) at the end: \(failure)")
            tally(pending.inputs, pending.divergences, 1)
        } else {
            tally(pending.inputs, pending.divergences, 0)
        }
        partial.connections = runner.connections
        return partial
    }

    /// Picks a stage, then an input of that stage.
    func make(_ random: inout FuzzRandom) -> WireInput {
        var input: WireInput
        let surfaces = SurfaceGenerators(commands: options.commands)
        switch random.weighted([(0, options.handshakeWeight), (1, options.framesWeight), (2, options.messageWeight),
                                (3, options.controlWeight), (4, options.recordingWeight), (5, options.scenarioWeight),
                                (6, options.driverWeight), (7, options.commands.isEmpty ? 0 : options.flagsWeight),
                                (8, options.manifestWeight)]) {
        case 3: return ControlGenerator().generate(&random)
        case 4: return surfaces.recording(&random)
        case 5: return surfaces.scenario(&random)
        case 6: return surfaces.driverLines(&random)
        case 7: return surfaces.flags(&random)
        case 8: return surfaces.manifest(&random)
        case 0:
            var generator = HandshakeGenerator()
            input = generator.generate(&random)
        case 1:
            var generator = FrameGenerator()
            input = generator.generate(&random)
        default:
            var generator = MessageGenerator()
            input = generator.generate(&random)
        }
        if input.bytes.count <= 600, random.chance(options.oneByteShare) { input.oneByteAtATime = true }
        return input
    }

    /// A problem's text without the details that vary from input to input.
    public static func kind(of problem: String) -> String {
        String(problem.prefix { $0 != "," && $0 != ":" }.prefix(48))
    }

    /// Bytes as text with escapes, cut to a readable length.
    static func escape(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes.prefix(160) {
            switch byte {
            case 0x0A: text += "\\n"
            case 0x0D: text += "\\r"
            case 0x5C: text += "\\\\"
            case 0x20..<0x7F: text += String(UnicodeScalar(byte))
            default: text += String(format: "\\x%02x", byte)
            }
        }
        return bytes.count > 160 ? text + "... (\(bytes.count) bytes)" : text
    }
}
