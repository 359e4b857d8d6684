import ArgumentParser
import ConformanceHarness
import Foundation
import ProtocolFuzzer
import TraceReplay

extension FuzzCommand {
    /// The campaign over every way in but the wire (`--mode inputs`): control API
    /// requests over real sockets, and recordings, scenario files, driver lines and
    /// command lines read in process by the code `mockchat` reads them with.
    static func inputOptions() -> WireFuzzer.Options {
        var options = WireFuzzer.Options.inputs()
        options.commands = commandOptions()
        options.surfaces.parseFlags = { arguments in
            do {
                _ = try MockChatCommand.parseAsRoot(arguments)
                return nil
            } catch {
                return MockChatCommand.message(for: error)
            }
        }
        options.surfaces.readRecording = { text in
            let recording: Recording
            do throws(TraceError) {
                recording = try RecordingReader.read(try TraceFile.parse(text, path: "fuzz.jsonl"))
            } catch {
                return error.message.isEmpty ? ["refused without a message: \(error)"] : []
            }
            let yaml = recording.yaml(id: "regressions/fuzz", title: "fuzz", source: "fuzz", steps: recording.steps(), comments: [])
            do {
                _ = try ScenarioLoader.load(yaml, path: "<output>")
                return []
            } catch {
                return ["the written scenario does not load: \(error)"]
            }
        }
        return options
    }

    /// Every subcommand's path (`scenarios from-trace`) with the options its help lists.
    static func commandOptions() -> [(name: String, options: [String])] {
        var found: [(name: String, options: [String])] = []
        func visit(_ command: ParsableCommand.Type, path: [String]) {
            let help = MockChatCommand.helpMessage(for: command, columns: 200)
            let options = help.matches(of: /--[a-z][a-z0-9-]*/).map { String($0.output) }
            found.append((path.joined(separator: " "), Array(Set(options)).sorted()))
            for sub in command.configuration.subcommands {
                visit(sub, path: path + [sub.configuration.commandName ?? String(describing: sub).lowercased()])
            }
        }
        for command in MockChatCommand.configuration.subcommands {
            visit(command, path: [command.configuration.commandName ?? String(describing: command).lowercased()])
        }
        return found
    }
}

extension FuzzCommand {
    /// `--replay PATH`: every regression file run again in this process; a line each.
    static func replay(_ path: String) throws {
        let loaded = try InputRegression.load(path)
        let outcomes = try WireFuzzer(options: inputOptions()).replay(loaded)
        var failed = 0
        for ((file, regression), problems) in zip(loaded, outcomes) {
            if problems.isEmpty {
                print("pass \(file) (\(regression.label))")
            } else {
                failed += 1
                print("FAIL \(file) (\(regression.label)): \(problems.joined(separator: "; "))")
            }
        }
        print("input regressions: \(loaded.count - failed) passed, \(failed) failed")
        if failed > 0 { throw ExitCode(1) }
    }

    /// `--shrink N`: input N of the seed, shrunk while a child `mockchat fuzz --mode inputs
    /// --replay` still dies of a signal on it (a crash), or, when it does not crash, while
    /// replaying it in this process still shows the same kind of finding.
    func shrinkInput(_ index: Int, seed: UInt64) throws {
        var options = Self.inputOptions()
        options.seed = seed
        let fuzzer = WireFuzzer(options: options)
        var regression = fuzzer.regression(index: index)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("mockchat-shrink-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let crashes = { (candidate: InputRegression) -> Bool in
            guard let file = try? candidate.write(to: scratch) else { return false }
            defer { try? FileManager.default.removeItem(atPath: file) }
            return Self.replayDiesOfASignal(file)
        }
        let shows: (InputRegression) -> Bool
        if crashes(regression) {
            regression.finding = "crash (the replay died of a signal)"
            shows = crashes
        } else if let problem = try fuzzer.replay([("input \(index)", regression)]).first?.first {
            regression.finding = problem
            let kind = WireFuzzer.kind(of: problem)
            shows = { candidate in (try? fuzzer.replay([("candidate", candidate)]).first?.first.map(WireFuzzer.kind)) == kind }
        } else {
            print("input \(index) of seed \(seed) (\(regression.label)) shows nothing: nothing to shrink")
            throw ExitCode(1)
        }
        let (shrunk, tests) = WireFuzzer.shrink(regression, budgetSeconds: options.shrinkBudgetSeconds * 4, shows: shows)
        let path = try shrunk.write(to: out)
        print("input \(index) of seed \(seed) (\(regression.label)): \(regression.finding)")
        print("shrunk from \(regression.text.utf8.count) to \(shrunk.text.utf8.count) bytes in \(tests) tests: \(path)")
    }

    /// Whether `mockchat fuzz --mode inputs --replay FILE` in a child process ends by a signal.
    private static func replayDiesOfASignal(_ file: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["fuzz", "--mode", "inputs", "--replay", file]
        // A crash is the answer sought, many times over: no backtrace for each.
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
    }
}
