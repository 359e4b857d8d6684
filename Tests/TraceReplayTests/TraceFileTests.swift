import Foundation
import Testing
@testable import TraceReplay

/// Reading trace files: the header is checked, and every problem names file:line.
@Suite struct TraceFileTests {
    static let header = #"{"format":"mockchat-trace","version":1,"clock":"virtual","start":1700000000.0,"fixtures":{}}"#
    static let open = #"{"seq":1,"t":1700000000.0,"kind":"open","conn":"c1","text":"127.0.0.1"}"#

    func problem(_ text: String) -> String {
        do {
            _ = try TraceFile.parse(text, path: "run.jsonl")
            return "read"
        } catch {
            return error.description
        }
    }

    @Test func readsTheHeaderAndEntries() throws {
        let trace = try TraceFile.parse(Self.header + "\n" + Self.open + "\n", path: "run.jsonl")
        #expect(trace.clock == "virtual")
        #expect(trace.start == 1_700_000_000)
        #expect(trace.lines.map(\.number) == [2])
    }

    @Test func somethingElseIsNotATrace() {
        #expect(problem("id: x\n").hasPrefix("run.jsonl:1: not valid JSON"))
        #expect(problem(Self.open + "\n").hasPrefix("run.jsonl:1: not a MockChat trace"))
        #expect(problem("") == "run.jsonl:1: empty file; a trace starts with its header line")
    }

    @Test func anotherVersionIsNamed() {
        let text = Self.header.replacingOccurrences(of: #""version":1"#, with: #""version":7"#) + "\n"
        #expect(problem(text) == "run.jsonl:1: trace format version 7; this mockchat reads version 1")
    }

    @Test func aCutLineAndABadEntryAreNamedByLine() {
        let cut = Self.header + "\n" + Self.open + "\n" + String(Self.open.prefix(30))
        #expect(problem(cut).hasPrefix("run.jsonl:3: not valid JSON"))
        #expect(problem(cut).hasSuffix("(the last line is cut short: was the server still writing?)"))
        let unknown = Self.header + "\n" + Self.open.replacingOccurrences(of: "\"open\"", with: "\"opened\"") + "\n"
        #expect(problem(unknown).hasPrefix("run.jsonl:2: unknown kind \"opened\""))
        let noTime = Self.header + "\n" + #"{"seq":1,"kind":"open"}"# + "\n"
        #expect(problem(noTime) == "run.jsonl:2: an entry needs 'seq' and 't'")
    }

    @Test func aPayloadBesideTheTraceIsReadBackAndAMissingOneNamed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let entry = #"{"seq":2,"t":1700000000.0,"kind":"control","route":"POST /control/fixtures","frame":{"file":"run.jsonl.2.json"},"text":"fixtures loaded: 1 users"}"#
        let path = folder + "/run.jsonl"
        try (Self.header + "\n" + entry + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: TraceError.self) { try TraceFile.load(path: path) }
        try #"{"users":[{"uid":"zoe"}]}"#.write(toFile: path + ".2.json", atomically: true, encoding: .utf8)
        let trace = try TraceFile.load(path: path)
        #expect(trace.lines[0].entry.frame?["users"]?.arrayValue?.first?["uid"]?.stringValue == "zoe")
    }
}
