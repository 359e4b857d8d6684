import ArgumentParser
import MockChatCore
import ChatProtocol
import ConformanceHarness
import Dispatch
import Foundation
import TraceReplay

extension ScenariosCommand {
    /// `mockchat scenarios from-trace FILE [-o repro.yaml]`.
    struct FromTrace: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "from-trace",
            abstract: "Turn a recording (`mockchat serve --record FILE`) into a scenario that replays it.",
            discussion: """
                Each connection becomes a wire client named after its user that sends the recorded
                frames at the recorded times; control requests become the server steps that issue
                them again; what the server sent becomes expectations (frames by number, closes
                with code and time), with serverTime, lastActiveAt and connectionId matched by type.
                Run the result with `mockchat test FILE` (docs/REPRODUCING-BUGS.md).
                """)

        @Argument(help: "The recording: a trace file with its header line.")
        var file: String

        @OptionGroup var made: MadeScenario

        func run() throws {
            let trace: TraceFile
            let made: (yaml: String, steps: Int, actions: Int)
            do {
                trace = try TraceFile.load(path: file)
                made = try ScenarioFromTrace.make(trace, id: self.made.id, title: self.made.title, source: self.made.source,
                                                  made: "mockchat scenarios from-trace")
            } catch {
                TraceInput.note("mockchat scenarios from-trace: \(error)")
                throw ExitCode(1)
            }
            try TraceInput.emit(made.yaml, to: self.made.output, command: "from-trace")
            TraceInput.note("from-trace: \(made.steps) steps (\(made.actions) actions) from \(TraceInput.name(file))"
                + (self.made.output.map { " written to \($0)" } ?? ""))
        }
    }

    /// `mockchat scenarios shrink FILE --expect ASSERTIONS [-o repro.yaml]`.
    struct Shrink: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reduce a recording to the fewest actions that still show one observation.",
            discussion: """
                --expect gives the observation as the assertions of an expect step, in YAML:
                'alice.frames: {event: user.online, user.uid: bob}' (alice received user.online of bob),
                'server.closed: {uid: bob, code: 4002}'. Wire clients are named after their users, as
                `from-trace` names them. Candidates keep each action at its recorded time and run on
                fresh in-process servers; the search is the fuzzers' delta debugging.
                """)

        @Argument(help: "The recording: a trace file with its header line.")
        var file: String

        @Option(help: "The observation that shows the bug: expect-step assertions in YAML.")
        var expect: String

        @OptionGroup var made: MadeScenario

        @Option(help: "Wall-clock seconds the search may take; the smallest scenario so far is kept.")
        var budget: Double = 120

        func validate() throws {
            try checkFlags { () throws(BoundedNumberError) in
                _ = try BoundedNumber.check(budget, "--budget", in: 0.001...BoundedNumber.daySeconds, unit: "seconds")
            }
        }

        func run() throws {
            let observation: JSONValue
            do {
                observation = try ScenarioLoader.assertions(yaml: expect)
            } catch {
                TraceInput.note("mockchat scenarios shrink: --expect: \(error.message)")
                throw ExitCode(2)
            }
            let recording = try TraceInput.recording(file, command: "shrink")
            let outcome: RecordingShrinker.Outcome
            do {
                outcome = try RecordingShrinker(recording: recording, observation: observation, budgetSeconds: budget).shrink()
            } catch {
                TraceInput.note("mockchat scenarios shrink: \(error.message)")
                throw ExitCode(1)
            }
            let name = TraceInput.name(file)
            let text = recording.yaml(
                id: made.id ?? "regressions/shrunk-\(name)", title: made.title ?? "Shrunk from the recording \(name)",
                source: made.source, steps: outcome.steps,
                comments: ["Made by `mockchat scenarios shrink \(name)`: \(outcome.actionsBefore) actions shrunk to",
                           "\(outcome.actionsAfter), without the waits it does not need; the last step is the observation."])
            try TraceInput.emit(text, to: made.output, command: "shrink")
            TraceInput.note(String(format: "shrink: %d actions (%d steps) -> %d actions (%d steps) in %.1f s, %d candidates run",
                                   outcome.actionsBefore, outcome.stepsBefore, outcome.actionsAfter, outcome.stepsAfter,
                                   outcome.seconds, outcome.tests))
        }
    }
}

/// Where a scenario made from a recording goes, and what it is called.
struct MadeScenario: ParsableArguments {
    @Option(name: .shortAndLong, help: "Write the scenario here (default: standard output).")
    var output: String?

    @Option(help: "The scenario's id (default: regressions/recorded-NAME or regressions/shrunk-NAME).")
    var id: String?

    @Option(help: "The scenario's title.")
    var title: String?

    @Option(help: "The scenario's source: the report, issue or document it reproduces.")
    var source = "recorded with `mockchat serve --record`"
}

/// Reading a recording and writing a scenario, shared by `from-trace` and `shrink`.
private enum TraceInput {
    static func recording(_ file: String, command: String) throws -> Recording {
        do {
            return try RecordingReader.read(try TraceFile.load(path: file))
        } catch {
            note("mockchat scenarios \(command): \(error)")
            throw ExitCode(1)
        }
    }

    /// Writes the scenario, after checking that it loads as any scenario file must.
    static func emit(_ text: String, to output: String?, command: String) throws {
        do {
            _ = try ScenarioLoader.load(text, path: output ?? "<output>")
        } catch {
            note("mockchat scenarios \(command): the written scenario does not load (a bug): \(error)")
            throw ExitCode(1)
        }
        guard let output else {
            FileHandle.standardOutput.write(Data(text.utf8))
            return
        }
        do {
            // Not atomically: a rename would replace a device such as /dev/null with a file.
            try text.write(toFile: output, atomically: false, encoding: .utf8)
        } catch {
            note("mockchat scenarios \(command): cannot write \(output): \(error.localizedDescription)")
            throw ExitCode(1)
        }
    }

    /// The file's name without folder or extension.
    static func name(_ file: String) -> String { ScenarioFromTrace.name(file) }

    static func note(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
