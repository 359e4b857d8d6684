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
    /// A driver starts with an empty signal mask and SIGHUP, SIGINT, SIGPIPE and SIGTERM at
    /// their default action, whatever the harness blocks or ignores for itself, so the
    /// SIGTERM of an interrupted run ends it at once. Fails before this change: the drivers
    /// ignored all four (inherited from the harness's handler), and only the SIGKILL 2 s
    /// later ended them.
    @Test func aDriverStartsWithDefaultSignalsAndAnInterruptEndsItAtOnce() throws {
        let run = try Run(count: 2)
        defer { run.cleanUp() }
        let process = try run.start(driver: "echo $$ >> \"$MOCKCHAT_TEST_PIDS\"; exec sleep 600",
                                    arguments: ["--driver-timeout", "120"])
        let deadline = Date().addingTimeInterval(30)
        // The first driver never says hello: the handshake waits for it (up to 120 s).
        while run.written.isEmpty || !run.written.allSatisfy(Self.isSleeping), Date() < deadline { usleep(20_000) }
        #expect(!run.written.isEmpty, "the driver did not start")
        // Bit n-1 stands for signal n in /proc's masks.
        let watched = [SIGHUP, SIGINT, SIGPIPE, SIGTERM].reduce(UInt64(0)) { $0 | 1 << UInt64($1 - 1) }
        for pid in run.written {
            let masks = Self.signalMasks(pid)
            #expect(masks["SigBlk"].map { $0 & watched } == 0, "driver \(pid) blocks \(String(masks["SigBlk"] ?? 0, radix: 16))")
            #expect(masks["SigIgn"].map { $0 & watched } == 0, "driver \(pid) ignores \(String(masks["SigIgn"] ?? 0, radix: 16))")
        }
        let interrupted = Date()
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(interrupted)
        print("driver processes: SIGINT to exit \(String(format: "%.2f", seconds)) s, \(run.running.count) left")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT,
                "\(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)")
        #expect(run.running == [], "left running after Ctrl-C: \(run.running)")
        #expect(seconds < DriverProcessGroups.graceSeconds, "the drivers waited for the SIGKILL: \(seconds) s")
    }

    /// Whether `pid` runs `sleep` (the driver's shell has exec'd it).
    static func isSleeping(_ pid: pid_t) -> Bool {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.hasPrefix("sleep") == true
    }

    /// The hexadecimal signal masks of /proc/PID/status (SigBlk, SigIgn, ...).
    static func signalMasks(_ pid: pid_t) -> [String: UInt64] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        var masks: [String: UInt64] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("Sig") {
            let parts = line.split(separator: ":")
            if parts.count == 2, let value = UInt64(parts[1].trimmingCharacters(in: .whitespaces), radix: 16) {
                masks[String(parts[0])] = value
            }
        }
        return masks
    }
}

