import ArgumentParser
import ConformanceHarness
import Foundation

/// `mockchat test`: runs scenario files and reports verdicts.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run conformance scenarios against a fresh in-process server (or an external one).",
        discussion: """
            Each scenario gets its own server and virtual clock, so the catalogue runs in
            seconds. Exit status 0 when nothing failed, 1 otherwise. The last line is
            `scenarios: N passed, N failed, N skipped`.
            """)

    @Argument(help: "Scenario files or folders (default: Fixtures/scenarios).")
    var paths: [String] = []

    @Option(help: "Only scenarios whose id matches this glob (* and ?), e.g. 'presence/*'.")
    var filter: String?

    @Option(help: "Write a JUnit XML report here.")
    var junit: String?

    @Option(help: "Write a JSON report here.")
    var json: String?

    @Option(help: "Run against an external `mockchat serve --clock virtual` at ws://HOST:PORT instead.")
    var server: String?

    @Option(help: ArgumentHelp("Drive the clients through this driver command, one process per scenario (docs/DRIVER.md).",
                               valueName: "command"))
    var sdk: String?

    @Option(help: ArgumentHelp("Wait for a driver to dial in over WebSocket at HOST:PORT and drive the clients through it.",
                               valueName: "host:port"))
    var sdkListen: String?

    @Option(help: "Seconds a driver has to answer each request (default 10).")
    var driverTimeout: Double = 10

    @Flag(help: "Real time: the server on the system clock, `advance` waits, `at` checks use --tolerance.")
    var wallClock = false

    @Option(help: "Tolerance of `at` checks in wall-clock mode, e.g. 100ms or 0.25 (seconds; default 100ms).")
    var tolerance: String = "100ms"

    @Option(help: "In wall-clock mode, skip scenarios whose advance steps add up to more than this many seconds (default 10).")
    var maxWait: Double = 10

    @Option(help: "Scenarios run at once (default: the number of cores).")
    var jobs: Int?

    @Option(help: "Use this seed for every scenario instead of each file's own.")
    var seed: UInt64?

    @Option(help: "File of scenario ids expected to fail (default: expected-failures.txt beside the scenarios, if present).")
    var expectedFailures: String?

    func run() throws {
        let roots = paths.isEmpty ? ["Fixtures/scenarios"] : paths
        var scenarios = try ScenarioLoader.loadAll(paths: roots)
        if let filter {
            scenarios = scenarios.filter { Glob.matches($0.id, pattern: filter) }
        }
        var options = CatalogueRunner.Options()
        if let jobs { options.jobs = max(1, jobs) }
        options.seed = seed
        options.serverURL = server
        signal(SIGPIPE, SIG_IGN)
        guard sdk == nil || sdkListen == nil else { throw ValidationError("give --sdk or --sdk-listen, not both") }
        if let sdk { options.driver = .command(sdk) }
        if let sdkListen {
            let listener = try DriverListener(address: try DriverCommand.address(sdkListen))
            FileHandle.standardError.write(Data("waiting for a driver at ws://\(listener.address)\n".utf8))
            options.driver = .listener(listener)
        }
        guard driverTimeout > 0 else { throw ValidationError("--driver-timeout must be positive") }
        options.driverTimeout = driverTimeout
        options.wallClock = wallClock
        options.maxWait = maxWait
        let toleranceMilliseconds: Int64
        do {
            toleranceMilliseconds = try ScenarioLoader.duration(Double(tolerance).map { .double($0) } ?? .string(tolerance))
        } catch {
            throw ValidationError("--tolerance: \(error)")
        }
        options.tolerance = Double(toleranceMilliseconds) / 1000
        let listPath = expectedFailures ?? roots.first.map { $0 + "/expected-failures.txt" }
        if let listPath, FileManager.default.fileExists(atPath: listPath) {
            options.expectedFailures = try CatalogueRunner.loadExpectedFailures(listPath)
        }
        let interactive = isatty(STDERR_FILENO) == 1
        let started = Date()
        let results = CatalogueRunner(options: options).run(scenarios) { done, total, result in
            if interactive {
                FileHandle.standardError.write(Data("\r\u{1B}[K[\(done)/\(total)] \(result.id)".utf8))
            } else if result.isFailure {
                FileHandle.standardError.write(Data("FAIL \(result.id)\n".utf8))
            }
        }
        if interactive { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        let wall = Date().timeIntervalSince(started)
        if let junit { try JUnitReport.render(results, wallSeconds: wall).write(toFile: junit, atomically: true, encoding: .utf8) }
        if let json { try JSONReport.render(results, wallSeconds: wall).write(toFile: json, atomically: true, encoding: .utf8) }
        print(ConsoleReport.render(results, wallSeconds: wall))
        if results.contains(where: \.isFailure) { throw ExitCode(1) }
    }
}
