import ChatProtocol
import Foundation
import MockChatCore

/// Runs an idle ramp as several `mockchat bench idle --worker` processes.
///
/// Each worker prints one JSON line when its ramp is over and then holds its
/// connections until it gets SIGTERM. Every wait here is bounded; workers that do not
/// answer in time are killed.
final class IdleWorkerPool {
    struct Result {
        var outcomes: [IdleWorker.Outcome] = []
        var problems: [String] = []
    }

    private let target: BenchTarget
    private let options: IdleBench.Options

    init(target: BenchTarget, options: IdleBench.Options) {
        self.target = target
        self.options = options
    }

    /// Starts the workers, waits for their ramps, calls `whileHeld` with the started
    /// workers' probes, then stops them.
    func run(progress: ProgressLine, whileHeld: ([ProcessProbe]) -> Void) -> Result {
        var result = Result()
        let count = options.processes
        let total = options.worker.connections
        var children: [(process: Process, output: Pipe)] = []
        var first = 0
        for index in 0..<count {
            let share = total / count + (index < total % count ? 1 : 0)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            var arguments = ["bench", "idle", "--worker", "--server", target.addressList,
                             "--connections", String(share), "--first-index", String(first),
                             "--keepalive", String(options.worker.keepalive), "--auth-key", target.authKey,
                             "--uids", options.worker.uids.joined(separator: ","), "--users", String(options.worker.users),
                             "--connect-concurrency", String(options.worker.connectConcurrency), "--no-progress"]
            if !target.sourceHosts.isEmpty {
                // Each worker starts on a different source address.
                let rotated = Array(target.sourceHosts[(index % target.sourceHosts.count)...] + target.sourceHosts[..<(index % target.sourceHosts.count)])
                arguments += ["--sources", rotated.joined(separator: ",")]
            }
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardInput = FileHandle.nullDevice
            first += share
            do {
                try process.run()
                children.append((process, output))
            } catch {
                result.problems.append("worker \(index) did not start: \(error)")
            }
        }
        progress.update("idle: \(children.count) worker processes ramping up \(total) connections")
        let deadline = Date().addingTimeInterval(120 + Double(total) / 200)
        for (index, child) in children.enumerated() {
            guard let line = Self.readLine(child.output.fileHandleForReading.fileDescriptor, until: deadline),
                  let outcome = IdleWorker.Outcome(jsonLine: line) else {
                result.problems.append("worker \(index) did not report its ramp in time")
                continue
            }
            result.outcomes.append(outcome)
        }
        whileHeld(children.map { ProcessProbe(pid: $0.process.processIdentifier) })
        for child in children where child.process.isRunning { kill(child.process.processIdentifier, SIGTERM) }
        let stopBy = Date().addingTimeInterval(15)
        for child in children {
            while child.process.isRunning, Date() < stopBy { Thread.sleep(forTimeInterval: 0.05) }
            if child.process.isRunning {
                kill(child.process.processIdentifier, SIGKILL)
                result.problems.append("a worker had to be killed")
            }
            child.process.waitUntilExit()
        }
        return result
    }

    /// Reads one line from `fd`, waiting at most until `deadline`.
    static func readLine(_ fd: Int32, until deadline: Date) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(1, min(1000, deadline.timeIntervalSinceNow * 1000)))
            guard poll(&poller, 1, milliseconds) >= 0 else { return nil }
            guard poller.revents != 0 else { continue }
            guard read(fd, &byte, 1) == 1 else { return nil }
            if byte == 10 { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }
}

extension IdleWorker.Outcome {
    /// The one line a worker process prints when its ramp is over.
    public var jsonLine: String {
        let failures = JSONObject(failures.sorted { $0.key < $1.key }.map { ($0.key, .integer(Int64($0.value))) })
        return JSONValue.object(JSONObject([
            ("loggedIn", .integer(Int64(loggedIn))), ("failed", .integer(Int64(failed))),
            ("startedAt", .integer(Int64(startedAt))), ("finishedAt", .integer(Int64(finishedAt))),
            ("failures", .object(failures)),
        ])).serialized()
    }

    /// Reads a worker's line.
    public init?(jsonLine line: String) {
        guard let value = try? JSONParser.parse(line), let loggedIn = value["loggedIn"]?.intValue,
              let failed = value["failed"]?.intValue, let started = value["startedAt"]?.intValue,
              let finished = value["finishedAt"]?.intValue else { return nil }
        var failures: [String: Int] = [:]
        for (key, count) in value["failures"]?.objectValue ?? JSONObject() { failures[key] = Int(count.intValue ?? 0) }
        self.init(loggedIn: Int(loggedIn), failed: Int(failed), failures: failures,
                  startedAt: UInt64(started), finishedAt: UInt64(finished))
    }
}
