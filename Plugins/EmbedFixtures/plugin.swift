// Compiles the files the binary carries (the fixtures, the web console, the client
// profiles, the scenario catalogue and the rule book) into the target that uses them, at
// build time: `Fixtures/` and `Console/` stay the one source, and `mockchat` still runs
// with no files around it.
import Foundation
import PackagePlugin

@main
struct EmbedFixtures: BuildToolPlugin {
    /// One generated enum: its name and access, FileEmbedder's shape and arguments, and
    /// the files and folders (relative to the package) whose change makes it again.
    struct Embedding {
        let name: String
        let access: String
        let shape: String
        let source: String
        let arguments: [String]
        let watched: [String]
    }

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let tool = try context.tool(named: "FileEmbedder")
        return try embeddings(for: target.name).map { embedding in
            let output = context.pluginWorkDirectoryURL.appending(path: "\(embedding.name).swift")
            return .buildCommand(
                displayName: "Embedding \(embedding.source) as \(embedding.name)",
                executable: tool.url,
                arguments: [output.path(percentEncoded: false), embedding.name, embedding.access, embedding.shape,
                            embedding.source] + embedding.arguments.map { absolute($0, root: root) },
                inputFiles: try embedding.watched.flatMap { try Self.tree(root.appending(path: $0)) },
                outputFiles: [output])
        }
    }

    /// What each target carries.
    func embeddings(for target: String) throws -> [Embedding] {
        switch target {
        case "MockChatServer":
            let fixtures = ["users", "app"].map { ($0, "Fixtures/\($0).json") }
            let console = ["html", "css", "js"].map { ($0, "Console/console.\($0)") }
            return [
                Embedding(name: "EmbeddedFixtures", access: "public", shape: "members",
                          source: "Fixtures/users.json and Fixtures/app.json",
                          arguments: fixtures.map { "\($0)=@\($1)" }, watched: fixtures.map(\.1)),
                Embedding(name: "EmbeddedConsole", access: "internal", shape: "members",
                          source: "Console/console.html, console.css and console.js",
                          arguments: console.map { "\($0)=@\($1)" }, watched: console.map(\.1)),
            ]
        case "ReferenceClient":
            return [Embedding(name: "EmbeddedProfiles", access: "public", shape: "dictionary",
                              source: "Fixtures/profiles/*.yaml", arguments: ["@Fixtures/profiles", ".yaml"],
                              watched: ["Fixtures/profiles"])]
        case "ConformanceHarness":
            return [
                Embedding(name: "EmbeddedCatalogue", access: "public", shape: "list", source: "Fixtures/scenarios",
                          arguments: ["@Fixtures/scenarios", ".yaml", ".yml", "expected-failures.txt"],
                          watched: ["Fixtures/scenarios"]),
                Embedding(name: "EmbeddedRuleBook", access: "public", shape: "list", source: "Fixtures/spec",
                          arguments: ["@Fixtures/spec", ".yaml"], watched: ["Fixtures/spec"]),
            ]
        default:
            throw PluginError("EmbedFixtures has nothing to embed in target \(target)")
        }
    }

    /// An argument with `@path` (after `KEY=` or alone) made absolute under `root`.
    func absolute(_ argument: String, root: URL) -> String {
        guard let at = argument.firstIndex(of: "@") else { return argument }
        let path = root.appending(path: String(argument[argument.index(after: at)...])).path(percentEncoded: false)
        return String(argument[..<at]) + path
    }

    /// `url` and, for a folder, every file and folder below it: a folder changes when an
    /// entry is added or removed, so the build makes the copy again then too.
    static func tree(_ url: URL) throws -> [URL] {
        guard let walk = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else { return [url] }
        return [url] + walk.compactMap { $0 as? URL }
    }
}

struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
