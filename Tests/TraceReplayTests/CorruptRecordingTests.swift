import Testing
@testable import TraceReplay

/// A corrupt recording is refused with its file:line and the field at fault, never with
/// a crash or a complaint about the scenario it would have become (`scenarios from-trace`).
@Suite struct CorruptRecordingTests {
    static let header = #"{"format":"mockchat-trace","version":1,"clock":"virtual","start":1700000000.0,"fixtures":{}}"#
    static let open = #"{"seq":1,"t":1700000000.0,"kind":"open","conn":"c1","text":"127.0.0.1"}"#

    /// The error reading `lines` as a recording.
    static func problem(_ lines: [String]) -> String {
        do {
            _ = try RecordingReader.read(try TraceFile.parse(lines.joined(separator: "\n") + "\n", path: "run.jsonl"))
            return "read"
        } catch {
            return error.description
        }
    }

    static func entry(_ fields: String) -> String { #"{"seq":2,"t":1700000000.5,"# + fields + "}" }

    /// Each fails before this change: the first three crashed `mockchat scenarios from-trace`
    /// (exit 132), the others were blamed on the written scenario ("does not load (a bug)").
    @Test(arguments: [
        ([header.replacingOccurrences(of: "1700000000.0", with: "1e308"), open],
         "run.jsonl:1: 'start' must be a number from 0 to 253402300799 Unix seconds, not 1e+308"),
        ([header, open.replacingOccurrences(of: "1700000000.0", with: "1e308")],
         "run.jsonl:2: 't' must be a number from 1700000000 to 1731622400 Unix seconds, not 1e+308"),
        ([header, #"{"seq":1,"t":1700000000.0,"kind":"open","text":"127.0.0.1"}"#],
         "run.jsonl:2: an 'open' entry needs 'conn', the connection's id as a string"),
        ([header, open, entry(#""kind":"in","conn":"c7","frame":{"id":1,"op":"ping"}"#)],
         "run.jsonl:3: 'conn' names c7, which no earlier 'open' entry opened"),
        ([header, open, entry(#""kind":"out","conn":"c1","frame":{"id":1,"nth":"x"}"#)],
         #"run.jsonl:3: the entry's 'frame' does not make a valid step (nth takes a frame number from 1): "#
            + #"{"expect":{"c1.frames":[{"nth":"x","id":1}]}}"#),
        ([header, open, entry(#""kind":"out","conn":"c1","frame":{"":1}"#)],
         "run.jsonl:3: the entry's 'frame' does not make a valid step (unknown field '' (did you mean 'at'?)): "
            + #"{"expect":{"c1.frames":[{"nth":1,"":1}]}}"#),
        ([header, open, #"{"seq":2,"t":1699999999.0,"kind":"in","conn":"c1","frame":{"id":1,"op":"ping"}}"#],
         "run.jsonl:3: 't' must be a number from 1700000000 to 1731622400 Unix seconds, not 1699999999"),
        // Found by `mockchat fuzz --mode inputs` (seed 2, input 2215): a year and more after the
        // start was read, and the scenario's advance step it became was refused.
        ([header, open.replacingOccurrences(of: "1700000000.0", with: "4294967296")],
         "run.jsonl:2: 't' must be a number from 1700000000 to 1731622400 Unix seconds, not 4294967296"),
        ([header, #"{"seq":1,"t":1700000000.0,"kind":"control","route":"POST /control/clock/advance","frame":{"ms":5}}"#],
         "run.jsonl: nothing to replay: no connection, frame or control request before the end"),
    ])
    func isRefusedNamingLineAndField(lines: [String], message: String) {
        #expect(Self.problem(lines) == message)
    }
}
