import ConformanceHarness
import Foundation
import MockChatTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `mockchat test --sdk` ends every process its drivers started before it exits, also
/// when interrupted (docs/DRIVER.md, "Transports"): real driver processes that
/// misbehave, and a count of what is left running afterwards.
@Suite(.serialized) struct DriverProcessTests {
    static let badDriver = Package.path("Tests/ConformanceHarnessTests/Fixtures/drivers/bad-driver.py")

    /// A folder with `count` copies of the init scenario and a file for the drivers' pids.
    struct Run {
        let folder: URL
        var pids: URL { folder.appendingPathComponent("pids") }
        var scenarios: URL { folder.appendingPathComponent("scenarios") }

        init(count: Int) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("driver-processes-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("scenarios"), withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: folder.appendingPathComponent("pids").path, contents: nil)
            let text = try String(contentsOfFile: Package.path("Tests/ConformanceHarnessTests/Fixtures/driver-init.yaml"), encoding: .utf8)
            for index in 1...count {
                try text.replacingOccurrences(of: "id: harness/driver-init", with: "id: harness/driver-init-\(index)")
                    .write(to: scenarios.appendingPathComponent("init-\(index).yaml"), atomically: true, encoding: .utf8)
            }
        }

        /// `mockchat test` on the scenarios through `driver`, started (not waited for).
        func start(driver: String, arguments: [String] = []) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: PackagePaths.mockchat)
            process.arguments = ["test", scenarios.path, "--sdk", driver, "--jobs", "2"] + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["MOCKCHAT_TEST_PIDS": pids.path]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }

        /// The pids the drivers wrote.
        var written: [pid_t] {
            ((try? String(contentsOf: pids, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { pid_t($0) }
        }

        /// The written pids whose process is still running (a zombie has ended).
        var running: [pid_t] {
            written.filter { pid in
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { return false }
                return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
            }
        }

        func cleanUp() {
            for pid in running { kill(pid, SIGKILL) }
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Fails before this change: 6 of 6 `sleep` children were left running.
    @Test func aChildHoldingTheDriversStdoutIsEndedWithIt() throws {
        let run = try Run(count: 6)
        defer { run.cleanUp() }
        let process = try run.start(driver: "python3 \(Self.badDriver) child-holds-stdout")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(run.written.count >= 6, "one driver per scenario (and one for the handshake)")
        #expect(run.running == [], "left running after the run: \(run.running)")
    }

    /// Fails before this change: all 6 drivers were left running.
    @Test func aDriverIgnoringSIGTERMIsKilledTwoSecondsLater() throws {
        let run = try Run(count: 6)
        defer { run.cleanUp() }
        let started = Date()
        let process = try run.start(driver: "python3 \(Self.badDriver) ignores-term")
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(started)
        #expect(process.terminationStatus == 0)
        #expect(run.written.count >= 6, "one driver per scenario (and one for the handshake)")
        #expect(run.running == [], "left running after the run: \(run.running)")
        #expect(seconds >= DriverProcessGroups.graceSeconds && seconds < 20, "\(seconds) s")
    }

    /// Fails before this change: the hanging drivers outlived the interrupted run.
    @Test func anInterruptedRunEndsItsDriversFirst() throws {
        let run = try Run(count: 2)
        defer { run.cleanUp() }
        let process = try run.start(driver: "echo $$ >> \"$MOCKCHAT_TEST_PIDS\"; exec python3 \(Self.badDriver) hang",
                                    arguments: ["--driver-timeout", "120"])
        let deadline = Date().addingTimeInterval(30)
        while run.written.count < 2, Date() < deadline { usleep(20_000) }
        #expect(run.written.count >= 2, "the drivers did not start")
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT)
        #expect(run.running == [], "left running after Ctrl-C: \(run.running)")
    }
}
