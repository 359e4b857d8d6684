import Testing
@testable import TraceReplay

@Suite struct TraceFileTests {
    static let header = #"{"format":"mockchat-trace","version":1,"clock":"virtual","start":1700000000.0,"fixtures":{}}"#

    @Test func readsTheHeaderAndEntries() throws {
        let text = Self.header + "\n" + #"{"seq":1,"t":1700000000.0,"kind":"open","conn":"c1","text":"127.0.0.1"}"# + "\n"
        let trace = try TraceFile.parse(text, path: "run.jsonl")
        #expect(trace.clock == "virtual")
        #expect(trace.lines.map(\.number) == [2])
    }
}
