import ArgumentParser
import ConformanceHarness
import Foundation
import ReferenceClient

/// `mockchat scenarios`: the catalogue built into the binary.
struct ScenariosCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenarios",
        abstract: "Work with scenarios: export the built-in catalogue, make one from a recording, shrink one.",
        subcommands: [Export.self, FromTrace.self, Shrink.self],
        aliases: ["scenario"])

    /// `mockchat scenarios export DIR`.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the built-in catalogue and client profiles to a folder, to read or edit.",
            discussion: """
                DIR/scenarios holds the scenario files (run them with `mockchat test DIR/scenarios`),
                DIR/profiles the client profiles (use them with `--profiles DIR/profiles`).
                Existing files are not overwritten unless --force is given.
                """)

        @Argument(help: "The folder to write into (created if missing).")
        var folder: String

        @Flag(help: "Overwrite files that already exist.")
        var force = false

        func run() throws {
            var files = EmbeddedCatalogue.files.map { ("scenarios/" + $0.path, $0.text) }
            files += EmbeddedProfiles.files.sorted { $0.key < $1.key }.map { ("profiles/\($0.key).yaml", $0.value) }
            let manager = FileManager.default
            for (relative, _) in files where !force && manager.fileExists(atPath: folder + "/" + relative) {
                throw ValidationError("\(folder)/\(relative) already exists (use --force to overwrite)")
            }
            for (relative, text) in files {
                let path = folder + "/" + relative
                try manager.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            }
            print("wrote \(files.count) files to \(folder) (scenarios/, profiles/)")
        }
    }
}
