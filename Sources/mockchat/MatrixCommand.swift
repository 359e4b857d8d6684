import ArgumentParser
import ConformanceHarness
import ConformanceMatrix
import Foundation

/// `mockchat matrix`: the catalogue through several SDKs, and the table of their verdicts.
struct MatrixCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matrix",
        abstract: "Run the catalogue through several SDKs and write a scenarios × SDKs table (HTML, Markdown, JSON).",
        discussion: """
            Each --sdk NAME=COMMAND is a driver command run as `mockchat test --sdk` runs it;
            each --sdk-listen NAME=HOST:PORT waits for a driver to dial in. The SDKs run at
            the same time, each on the test command's runner. Writes matrix.html, matrix.md
            and matrix.json into --out (and --junit: one suite per SDK). Exit status 1 when
            any SDK fails.
            """)

    @Argument(help: "Scenario files or folders (default: the built-in catalogue).")
    var paths: [String] = []

    @Option(name: .customLong("sdk"), help: ArgumentHelp("An SDK's column name and driver command (repeatable).", valueName: "name=command"))
    var sdks: [String] = []

    @Option(name: .customLong("sdk-listen"), help: ArgumentHelp("An SDK whose driver dials in at HOST:PORT (repeatable).", valueName: "name=host:port"))
    var listens: [String] = []

    @Option(help: "Only scenarios whose id matches this glob (* and ?).")
    var filter: String?

    @Option(help: "Folder for matrix.html, matrix.md and matrix.json (default: .build/matrix).")
    var out: String = ".build/matrix"

    @Option(help: "Write a JUnit XML report with one suite per SDK here.")
    var junit: String?

    @OptionGroup var timeout: DriverTimeoutOption

    @Option(help: "Scenarios run at once, shared among the SDKs (default: the number of cores).")
    var jobs: Int?

    func validate() throws {
        if sdks.isEmpty && listens.isEmpty { throw ValidationError("give at least one --sdk NAME=COMMAND or --sdk-listen NAME=HOST:PORT") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        let names = try (sdks + listens).map { try Self.split($0).name }
        if let twice = Dictionary(grouping: names, by: { $0 }).first(where: { $0.value.count > 1 })?.key {
            throw ValidationError("two SDKs are named '\(twice)'; each column needs its own name")
        }
    }

    /// `NAME=VALUE`, where the value may itself hold `=`.
    static func split(_ entry: String) throws -> (name: String, value: String) {
        guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex, entry.index(after: equals) != entry.endIndex else {
            throw ValidationError("expected NAME=VALUE, got '\(entry)'")
        }
        return (String(entry[..<equals]), String(entry[entry.index(after: equals)...]))
    }

    func run() throws {
        let plan = try TestPlan.forCommand("matrix", paths: paths, filter: filter)
        signal(SIGPIPE, SIG_IGN)
        defer { DriverProcessGroups.endAll() }
        var entries = try sdks.map { entry in
            let (name, command) = try Self.split(entry)
            return MatrixRunner.Entry(name: name, driver: .command(command))
        }
        for entry in listens {
            let (name, address) = try Self.split(entry)
            let listener = try DriverListener(address: try DriverCommand.address(address))
            FileHandle.standardError.write(Data("\(name): waiting for a driver at ws://\(listener.address)\n".utf8))
            entries.append(.init(name: name, driver: .listener(listener)))
        }
        var options = CatalogueRunner.Options()
        if let jobs { options.jobs = jobs }
        options.driverTimeout = timeout.driverTimeout
        let matrix = MatrixRunner(options: options, ruleBook: RuleBook.embedded).run(entries, scenarios: plan.scenarios) { sdk, _, _, result in
            if result.isFailure { FileHandle.standardError.write(Data("\(sdk): FAIL \(result.id)\n".utf8)) }
        }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let reports = [("matrix.html", MatrixReport.html(matrix)), ("matrix.md", MatrixReport.markdown(matrix)),
                       ("matrix.json", MatrixReport.json(matrix))]
        for (file, text) in reports { try text.write(toFile: "\(out)/\(file)", atomically: true, encoding: .utf8) }
        if let junit { try MatrixReport.junit(matrix).write(toFile: junit, atomically: true, encoding: .utf8) }
        for column in matrix.columns {
            let totals = column.totals.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            print("\(column.name) (\(column.sdkName) \(column.sdkVersion)): \(totals); \(String(format: "%.1f", column.wallSeconds)) s")
        }
        let differing = matrix.rows.filter(\.differs).count
        print("matrix: \(matrix.columns.count) SDKs × \(matrix.rows.count) scenarios, \(differing) differ; written to \(out)/matrix.{html,md,json}")
        if matrix.isFailure { throw ExitCode(1) }
    }
}
