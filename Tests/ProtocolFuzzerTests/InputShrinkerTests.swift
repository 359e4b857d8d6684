import ChatProtocol
import Foundation
import MockChatTestSupport
@testable import ProtocolFuzzer
import Testing

/// A finding of `mockchat fuzz --mode inputs` is shrunk (fewer lines and fields, smaller
/// numbers, shorter strings) and written as a regression file that `--replay` runs again.
@Suite struct InputShrinkerTests {
    /// The shrinker alone, with a seeded bug as its test: a control body "fails" while a
    /// `clock` past 1e15 is in it.
    @Test func aControlBodyShrinksToTheFieldThatShowsTheFinding() throws {
        let body = #"{"clock":1e308,"note":"\#(String(repeating: "x", count: 300))","users":[1,2,{"uid":"zoe","n":-7}]}"#
        let input = ControlGenerator.request("control/POST /control/reset field clock", method: "POST", path: "/control/reset", body: body)
        func shows(_ candidate: WireInput) -> Bool {
            guard let parsed = try? JSONParser.parse(Array(InputParts(candidate).lines.joined().utf8)) else { return false }
            return (parsed["clock"]?.doubleValue ?? 0) > 1e15
        }
        var shrinker = InputShrinker()
        let shrunk = shrinker.shrink(input, shows: shows)
        #expect(InputParts(shrunk).lines == [#"{"clock":1e+16}"#])
        #expect(InputParts(shrunk).method == "POST" && InputParts(shrunk).target == "/control/reset")
        #expect(shrunk.bytes.count < input.bytes.count / 3, "\(input.bytes.count) bytes became \(shrunk.bytes.count)")
        #expect(shrinker.tests < 200, "\(shrinker.tests) candidates")
    }

    @Test func numbersShrinkByPowersOfTen() {
        #expect(InputShrinker.smaller(1e308) == [0, 1, 1e154, 1e307])
        #expect(InputShrinker.smaller(-5e16) == [0, -1, -1e8, -1e15, -1e16])
        #expect(InputShrinker.smaller(1) == [0])
    }

    /// A deliberate bug behind a test-only switch (`MOCKCHAT_FUZZ_SEEDED_BUG=recording-time`:
    /// a recording line with `t` past 1e15 traps): the campaign crashes and its note names
    /// the input; `--shrink` shrinks it in child processes to the one field that crashes
    /// and writes the regression; `--replay` crashes on it with the bug, passes without.
    @Test func aSeededCrashIsNamedShrunkWrittenAndReplayed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("input-shrink-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let seeded = ["MOCKCHAT_FUZZ_SEEDED_BUG": "recording-time", "SWIFT_BACKTRACE": "enable=no"]
        let campaign = try Self.mockchat(["fuzz", "--mode", "inputs", "--seed", "20261126", "--inputs", "5000", "--jobs", "1"],
                                         environment: seeded)
        #expect(campaign.signalled, "the seeded bug crashed the campaign")
        let note = try #require(campaign.stderr.firstMatch(of: /crashed while running input (\d+) \(recording\//), "\(campaign.stderr)")
        let index = String(note.output.1)
        let shrink = try Self.mockchat(["fuzz", "--mode", "inputs", "--seed", "20261126", "--shrink", index, "--out", folder],
                                       environment: seeded)
        #expect(shrink.status == 0, "\(shrink.stdout)\(shrink.stderr)")
        print("input shrinking: " + (shrink.stdout.split(separator: "\n").last.map(String.init) ?? ""))
        let loaded = try InputRegression.load(folder)
        #expect(loaded.count == 1)
        let regression = try #require(loaded.first?.regression)
        #expect(regression.text == "{\"t\":1e+16}\n", "shrunk to the one field and the smallest number that crash")
        #expect(regression.finding == "crash (the replay died of a signal)" && regression.index == Int(index))
        #expect(try Self.mockchat(["fuzz", "--mode", "inputs", "--replay", folder], environment: seeded).signalled)
        let fixed = try Self.mockchat(["fuzz", "--mode", "inputs", "--replay", folder], environment: [:])
        #expect(fixed.status == 0 && fixed.stdout.contains("1 passed, 0 failed"), "\(fixed.stdout)")
    }

    /// The regressions kept in the repository pass (each failed before its fix: see its `finding`).
    @Test func theKeptRegressionsPass() throws {
        let run = try Self.mockchat(["fuzz", "--mode", "inputs", "--replay", PackagePaths.path("Fixtures/input-regressions")], environment: [:])
        #expect(run.status == 0, "\(run.stdout)")
        #expect(run.stdout.contains(" 0 failed"))
    }

    static func mockchat(_ arguments: [String], environment: [String: String])
        throws -> (status: Int32, signalled: Bool, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PackagePaths.mockchat)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("mockchat-stderr-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errors.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errors) }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal,
                String(decoding: out, as: UTF8.self), (try? String(contentsOf: errors, encoding: .utf8)) ?? "")
    }
}
