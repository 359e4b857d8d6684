import ArgumentParser
import ConformanceHarness
import Foundation

/// `mockchat spec`: the rule book (Fixtures/spec, docs/SPECIFICATION.md).
struct SpecCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spec",
        abstract: "The rule book: every rule the catalogue and the reference model rely on.",
        subcommands: [Docs.self])

    /// `mockchat spec docs`: docs/CONFORMANCE.md's generated regions.
    struct Docs: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "docs",
            abstract: "Regenerate or check the generated regions of docs/CONFORMANCE.md.",
            discussion: """
                The regions between <!-- generated: NAME --> and <!-- /generated --> come from the
                built-in rule book, the built-in catalogue and the statements file; the prose
                around them is left alone. Without --write or --check the updated document goes
                to standard output.
                """)

        @Argument(help: "The document (default docs/CONFORMANCE.md).")
        var document = "docs/CONFORMANCE.md"

        @Option(help: "The documents' statements and the rules that carry them.")
        var statements = "docs/statements.yaml"

        @Flag(help: "Rewrite the document in place.")
        var write = false

        @Flag(help: "Exit 1, naming each region, when the document is stale or a statement names no scenario.")
        var check = false

        func run() throws {
            let generator = ConformanceDocument(
                book: .embedded,
                scenarios: try TestPlan.make(paths: [], filter: nil, expectedFailuresFile: nil).scenarios,
                statements: try ConformanceDocument.statements(yaml: try String(contentsOfFile: statements, encoding: .utf8),
                                                               path: statements))
            let text = try String(contentsOfFile: document, encoding: .utf8)
            if check {
                let stale = generator.staleRegions(in: text)
                for name in stale { print("\(document): region '\(name)' is stale: run mockchat spec docs --write") }
                for problem in generator.problems { print("\(statements): \(problem)") }
                guard stale.isEmpty, generator.problems.isEmpty else { throw ExitCode(1) }
                print("\(document): up to date with the rule book and the catalogue")
                return
            }
            let updated = try generator.update(text)
            if write {
                try updated.write(toFile: document, atomically: true, encoding: .utf8)
            } else {
                print(updated, terminator: "")
            }
        }
    }
}
