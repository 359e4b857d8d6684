import ArgumentParser
import ConformanceHarness
import EventLoop
import Foundation

/// `mockchat test`: runs scenario files and reports verdicts.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run conformance scenarios against a fresh in-process server (or an external one).",
        discussion: """
            Each scenario gets its own server and virtual clock, so the catalogue runs in
            seconds. With no path, the catalogue built into the binary runs. A file that
            cannot be loaded becomes an `error` verdict and the others still run; reports
            are always written. Exit status 0 when nothing failed, 1 otherwise (with
            --strict, deviations fail too). The last line is `scenarios: N passed, N failed,
            N skipped` (then deviations, waived, not applicable, xfail, xpass and errors
            when there are any). docs/SPECIFICATION.md: rule book, manifest, verdicts.
            """)

    @Argument(help: "Scenario files or folders (default: the built-in catalogue).")
    var paths: [String] = []

    @Flag(help: "Only load and check the files; run nothing. Exit 1 when any has a problem.")
    var check = false

    @Flag(help: "Print each scenario's id, file, rules and title (tab-separated), run nothing.")
    var list = false

    @Option(help: "The SDK's manifest (docs/SPECIFICATION.md): its parameter values, features and waivers.")
    var manifest: String?

    @Flag(help: "Exit 1 on deviations too (a decision or parameter differs from MockChat's and is not declared).")
    var strict = false

    @Option(help: "Only scenarios whose id matches this glob (* and ?), e.g. 'presence/*'. Matching nothing is an error.")
    var filter: String?

    @Option(help: "Write a JUnit XML report here ('-': standard output).")
    var junit: String?

    @Option(help: "Write a JSON report here ('-': standard output; the text report then goes to standard error).")
    var json: String?

    @Option(help: "Write a self-contained HTML report with a sequence diagram per scenario here.")
    var html: String?

    @Option(help: "Write each scenario's full server trace and client logs into this folder.")
    var traceDir: String?

    @Flag(help: "Print each step as it runs.")
    var verbose = false

    @Option(help: "Run against an external `mockchat serve --clock virtual`: ws://HOST:PORT[/v1/ws] or HOST:PORT.")
    var server: String?

    @OptionGroup var driver: DriverOptions

    @Option(help: "In wall-clock mode, skip scenarios whose advance steps add up to more than this many seconds (default 10).")
    var maxWait: Double = 10

    @Option(help: "Scenarios run at once, at least 1 (default: the number of cores).")
    var jobs: Int?

    @Option(help: "Use this seed for every scenario instead of each file's own.")
    var seed: UInt64?

    @Option(help: "Folder of <profile>.yaml files (default: the profiles built into the binary).")
    var profiles: String?

    @Option(help: "File of scenario ids expected to fail (default: expected-failures.txt beside the scenarios, if present). An id no scenario has is an error.")
    var expectedFailures: String?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        if let server, SocketAddress(server: server) == nil {
            throw ValidationError("--server takes ws://HOST:PORT[/v1/ws] or HOST:PORT, got '\(server)'")
        }
    }

    func run() throws {
        let plan = try TestPlan.forCommand("test", paths: paths, filter: filter, expectedFailuresFile: expectedFailures)
        if list {
            print(["id", "file", "rules", "title"].joined(separator: "\t"))
            for scenario in plan.scenarios {
                print([scenario.id, scenario.path, scenario.rules.joined(separator: ","), scenario.title].joined(separator: "\t"))
            }
            return
        }
        if check {
            for broken in plan.broken { print(broken.message ?? broken.id) }
            // Every scenario names the rules it checks (docs/SPECIFICATION.md).
            let unnamed = plan.scenarios.filter(\.rules.isEmpty)
            for scenario in unnamed {
                print("\(scenario.path): scenario '\(scenario.id)' names no rule (add `rules: [id, ...]`, docs/SPECIFICATION.md)")
            }
            let problems = plan.broken.count + unnamed.count
            print("checked \(plan.scenarios.count + plan.broken.count) files: \(problems) with problems")
            if problems > 0 { throw ExitCode(1) }
            return
        }
        var options = CatalogueRunner.Options()
        if let jobs { options.jobs = jobs }
        options.seed = seed
        options.serverURL = server
        signal(SIGPIPE, SIG_IGN)
        // No driver process outlives the run, also when it is interrupted (docs/DRIVER.md;
        // `main` takes the interrupting signals).
        defer { DriverProcessGroups.endAll() }
        options.driver = try driver.source { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
        options.driverTimeout = driver.driverTimeout
        do {
            options.manifest = try declaredManifest(driver: options.driver)
        } catch {
            FileHandle.standardError.write(Data("mockchat test: \(error.description)\n".utf8))
            throw ExitCode(1)
        }
        options.wallClock = driver.wallClock
        options.maxWait = maxWait
        options.tolerance = try driver.toleranceSeconds()
        options.expectedFailures = plan.expectedFailures
        options.profilesFolder = profiles
        options.traceDirectory = traceDir
        options.recordTimeline = html != nil
        if verbose { options.stepLog = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) } }
        if let traceDir {
            try FileManager.default.createDirectory(atPath: traceDir, withIntermediateDirectories: true)
        }
        // On a terminal `[done/total] id` in place; in logs (and with --verbose) a line per failure.
        let progress = ProgressLine(interactive: ProgressLine.standardErrorIsTerminal && !verbose)
        let started = Date()
        var results = CatalogueRunner(options: options).run(plan.scenarios) { done, total, result in
            if progress.isInteractive {
                progress.update("[\(done)/\(total)] \(result.id)")
            } else if result.isFailure {
                progress.note("FAIL \(result.id)")
            }
        }
        progress.clear()
        results += plan.broken
        let wall = Date().timeIntervalSince(started)
        // Every report is attempted even when another cannot be written.
        var problems: [String] = []
        func write(_ text: String, to path: String?, flag: String) {
            guard let path else { return }
            if path == "-" { return FileHandle.standardOutput.write(Data(text.utf8)) }
            do { try text.write(toFile: path, atomically: true, encoding: .utf8) } catch {
                problems.append("cannot write the \(flag) report to \(path): \(error.localizedDescription)")
            }
        }
        write(JUnitReport.render(results, wallSeconds: wall), to: junit, flag: "--junit")
        write(JSONReport.render(results, wallSeconds: wall), to: json, flag: "--json")
        write(HTMLReport.render(results, wallSeconds: wall), to: html, flag: "--html")
        var console = ConsoleReport.render(results, wallSeconds: wall)
        if !problems.isEmpty {
            // Before the summary, which stays the last line.
            var lines = console.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines.insert(contentsOf: problems, at: max(0, lines.count - 1))
            console = lines.joined(separator: "\n")
        }
        let toStandardError = json == "-" || junit == "-"
        if toStandardError {
            FileHandle.standardError.write(Data((console + "\n").utf8))
        } else {
            print(console)
        }
        let summary = RunSummary(results)
        if (strict ? summary.isStrictFailure : summary.isFailure) || !problems.isEmpty { throw ExitCode(1) }
    }

    /// The `--manifest` file, else the manifest in the driver's hello, else none.
    private func declaredManifest(driver: CatalogueRunner.DriverSource?) throws(ScenarioError) -> Manifest? {
        if let manifest { return try Manifest.load(path: manifest) }
        guard let driver, let declared = try driver.handshake(timeout: self.driver.driverTimeout).manifest else { return nil }
        return try Manifest.read(hello: declared, origin: "the driver's hello")
    }
}
