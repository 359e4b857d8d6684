import ChatProtocol
import ConformanceHarness
import Dispatch
import Foundation
import MockChatCore
import Synchronization

/// Runs the inputs read in process and says what went wrong: each must be refused with
/// a message or taken, within ``deadlineSeconds`` of its thread's CPU time. A crash ends the run
/// (the campaign's crash note names the input).
public struct SurfaceRunner: Sendable {
    /// Parses a command line as `mockchat` would; the refusal's message, or nil when it parsed.
    public var parseFlags: (@Sendable ([String]) -> String?)?
    /// Reads a recording as `scenarios from-trace` does; what went wrong (a refusal
    /// without a line, a written scenario that does not load).
    public var readRecording: (@Sendable (String) -> [String])?
    /// Seconds of CPU time an input may take before it counts as a hang.
    var deadlineSeconds = 20.0
    /// Share of loaded scenario files that are also run.
    var runShare = 0.25

    public init() {}

    func run(_ input: WireInput) -> [String] {
        let text = String(decoding: input.bytes, as: UTF8.self)
        let outcome = Mutex<[String]>([])
        let finished = Self.within(deadlineSeconds) { [self] in
            let problems: [String] = switch input.stage {
            case .recording: Self.seededBug(text) + (readRecording?(text) ?? [])
            case .scenario: scenario(text, run: Self.decides(input.bytes, share: runShare))
            case .driverLine: driverLines(text)
            case .manifest: manifest(text)
            default: flags(text)
            }
            outcome.withLock { $0 = problems }
        }
        return finished ? outcome.withLock { $0 } : ["no answer within \(Int(deadlineSeconds)) s of CPU time (a hang)"]
    }

    /// A deliberate bug, for the tests of crash shrinking (docs/FUZZING.md): with
    /// `MOCKCHAT_FUZZ_SEEDED_BUG=recording-time` in the environment, a recording line
    /// whose `t` is past 1e15 s traps here (Double to Int64), as an unchecked reader would.
    private static func seededBug(_ text: String) -> [String] {
        guard seededBugName == "recording-time" else { return [] }
        for line in text.split(separator: "\n") {
            if let seconds = (try? JSONParser.parse(Array(line.utf8)))?["t"]?.doubleValue, seconds > 1e15 {
                _ = Int64(seconds * 1_000_000)
            }
        }
        return []
    }

    private static let seededBugName = ProcessInfo.processInfo.environment["MOCKCHAT_FUZZ_SEEDED_BUG"]

    /// `mockchat test FILE`: a file is refused with a message or loads; one that loads may run.
    private func scenario(_ text: String, run: Bool) -> [String] {
        let scenario: Scenario
        do {
            scenario = try ScenarioLoader.load(text, path: "fuzz.yaml")
        } catch {
            return error.message.isEmpty ? ["refused without a message"] : []
        }
        guard run else { return [] }
        _ = ScenarioRunner(options: CatalogueRunner.Options()).run(scenario)
        return []
    }

    /// `mockchat test --manifest FILE`: refused with a message, or read and a backoff
    /// scenario run with its values.
    private func manifest(_ text: String) -> [String] {
        let manifest: Manifest
        do {
            manifest = try Manifest.read(text, origin: "fuzz.yaml")
        } catch {
            return error.message.isEmpty ? ["refused without a message"] : []
        }
        guard let scenario = Self.backoffScenario else { return [] }
        var options = CatalogueRunner.Options()
        options.manifest = manifest
        _ = ScenarioRunner(options: options).run(scenario)
        return []
    }

    /// The catalogue's backoff scenario, which every manifest input runs: loaded once.
    private static let backoffScenario: Scenario? = EmbeddedCatalogue.files
        .first { $0.path.hasSuffix("cometchat-backoff-schedule.yaml") }
        .flatMap { file in try? ScenarioLoader.load(file.text, path: file.path) }

    /// `mockchat driver`: every line gets its answer, and the driver ends when its input does.
    private func driverLines(_ text: String) -> [String] {
        let inbox = DriverInbox()
        let written = Mutex<[JSONValue]>([])
        let driver: ReferenceDriver
        do {
            driver = try ReferenceDriver(inbox: inbox) { message in written.withLock { $0.append(message) } }
        } catch {
            return ["the reference driver cannot start: \(error)"]
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines { inbox.push(.message(Array(line.utf8))) }
        inbox.push(.closed("input ended"))
        driver.serve()
        let replies = written.withLock { $0 }.filter { $0["type"]?.stringValue == "reply" || $0["type"]?.stringValue == "error" }
        return replies.count == lines.count ? [] : ["\(lines.count) lines got \(replies.count) replies or errors"]
    }

    /// `mockchat ARGUMENTS`: parsed, or refused with a message.
    private func flags(_ text: String) -> [String] {
        guard let parseFlags else { return [] }
        let message = parseFlags(text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        return message?.isEmpty == true ? ["refused without a message"] : []
    }

    /// Whether an input's bytes pick the rarer branch (the same bytes, the same choice).
    private static func decides(_ bytes: [UInt8], share: Double) -> Bool {
        Double(FNV1a64.hash(bytes, basis: decisionBasis) % 1000) < share * 1000
    }

    /// The basis the choice has always hashed from: the standard one without its last
    /// digit. Kept so that a seed runs the same scenario inputs as before.
    private static let decisionBasis: UInt64 = 1_469_598_103_934_665_603

    /// Runs `body` on a thread of its own; false when it did not finish in time (it is left
    /// running). Time is the thread's CPU time, so a machine loaded by other work does not
    /// turn a slow input into a hang; a thread blocked without using CPU counts as hung
    /// after ``blockedFactor`` times `seconds` of wall time.
    private static func within(_ seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let clock = Mutex<clockid_t?>(nil)
        let thread = Thread {
            var id = clockid_t()
            if pthread_getcpuclockid(pthread_self(), &id) == 0 { clock.withLock { $0 = id } }
            body()
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        let started = Stopwatch()
        while done.wait(timeout: .now() + 0.25) == .timedOut {
            var spent = timespec()
            let cpu = clock.withLock { $0 }.map { clock_gettime($0, &spent) == 0 ? Double(spent.tv_sec) + Double(spent.tv_nsec) / 1e9 : 0 } ?? 0
            if cpu > seconds || started.elapsedSeconds > seconds * blockedFactor { return false }
        }
        return true
    }

    /// Wall time, in multiples of the deadline, after which a thread is hung even without CPU use.
    static let blockedFactor = 15.0
}
