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
