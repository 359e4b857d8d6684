import ArgumentParser
import ConformanceHarness
import Foundation
import MockChatCore
import ProtocolFuzzer

extension FuzzCommand {
    /// `mockchat fuzz --sdk COMMAND` / `--sdk-listen HOST:PORT`.
    func runSDK(seed: UInt64) throws {
        signal(SIGPIPE, SIG_IGN)
        // No driver process outlives the run, also when it is interrupted (docs/DRIVER.md;
        // `main` takes the interrupting signals).
        defer { DriverProcessGroups.endAll() }
        let progress = ProgressLine()
        var options = SDKFuzzer.Options()
        options.seed = seed
        options.steps = steps ?? (seconds == nil ? 2_000 : Int.max)
        options.seconds = seconds
        options.historyLength = max(1, historyLength ?? 40)
        options.outputFolder = out
        options.stopAtFirst = stopAtFirst
        options.maxReports = max(0, maxFindings)
        options.baseline = baseline.map { .command($0) }
        if let jobs { options.jobs = max(1, jobs) }
        options.runner.driverTimeout = driver.driverTimeout
        do {
            options.runner.manifest = try manifest.map { path throws(ScenarioError) in try Manifest.load(path: path) }
        } catch {
            throw ValidationError("--manifest: \(error.description)")
        }
        options.runner.wallClock = driver.wallClock
        options.runner.tolerance = try driver.toleranceSeconds()
        options.runner.driver = try driver.source { progress.note($0) }
        if let sdk = driver.sdk { options.commandLine = "mockchat fuzz --sdk '\(sdk)'" }
        if let sdkListen = driver.sdkListen { options.commandLine = "mockchat fuzz --sdk-listen \(sdkListen)" }
        if let baseline { options.commandLine += " --baseline '\(baseline)'" }
        if let manifest { options.commandLine += " --manifest '\(manifest)'" }
        options.commandLine += " --steps \(options.steps == Int.max ? 0 : options.steps) --history-length \(options.historyLength)"
        let fuzzer: SDKFuzzer
        do {
            fuzzer = try SDKFuzzer(options: options)
        } catch {
            throw ValidationError("the driver cannot be used: \(error.description)")
        }
        progress.note("mockchat fuzz: sdk \(fuzzer.capabilities.sdkName) \(fuzzer.capabilities.sdkVersion), seed \(seed)")
        let report = fuzzer.run { snapshot in
            let rate = Double(snapshot.steps) / max(snapshot.elapsedSeconds, 0.001)
            let target = snapshot.target == Int.max ? "" : "/\(snapshot.target)"
            progress.update(String(format: "sdk: %d%@ steps, %d histories, %.0f steps/s, %d differences%@",
                                   snapshot.steps, target, snapshot.histories, rate, snapshot.divergences,
                                   snapshot.shrinking ? " (shrinking)" : ""))
        }
        progress.keepLastState()
        let failed = report.divergences > 0 || report.flaky > 0 || report.badDriverRuns > 0 || report.crashes > 0
        var lines = FuzzSummary.sdk(report)
        lines.append(String(format: "fuzz: %@, %.1f s wall time, seed %llu", failed ? "FAILED" : "passed",
                            report.wallSeconds, seed))
        print(lines.joined(separator: "\n"))
        if let json {
            try FuzzSummary.sdkJSON(report).description.write(toFile: json, atomically: true, encoding: .utf8)
        }
        if failed { throw ExitCode(1) }
    }
}
