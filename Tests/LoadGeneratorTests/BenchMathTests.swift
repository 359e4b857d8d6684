import ChatProtocol
import Foundation
import LoadGenerator
import Testing

@Suite("Report math")
struct BenchMathTests {
    @Test("rates, CPU per message and memory per connection")
    func arithmetic() {
        #expect(BenchMath.rate(20_000, seconds: 10) == 2_000)
        #expect(BenchMath.rate(5, seconds: 0) == 0)
        #expect(BenchMath.microsecondsPerMessage(cpuSeconds: 0.5, messages: 100_000) == 5)
        #expect(BenchMath.microsecondsPerMessage(cpuSeconds: nil, messages: 10) == nil)
        #expect(BenchMath.microsecondsPerMessage(cpuSeconds: 1, messages: 0) == nil)
        #expect(BenchMath.bytesPerConnection(before: 10_000_000, after: 30_000_000, connections: 1_000) == 20_000)
        #expect(BenchMath.bytesPerConnection(before: nil, after: 1, connections: 1) == nil)
        #expect(BenchMath.ratio(3, to: 2) == 1.5)
        #expect(BenchMath.ratio(3, to: 0) == nil)
        #expect(BenchMath.median([3, 1, 2]) == 2)
        #expect(BenchMath.median([4, 1, 3, 2]) == 2.5)
        #expect(BenchMath.median([]) == nil)
        #expect(BenchMath.rounded(1.23456, places: 2) == 1.23)
    }

    @Test("latency summary reads percentiles from the histogram")
    func latency() {
        var recorder = LatencyRecorder()
        for micros in 1...1_000 { recorder.record(nanoseconds: UInt64(micros) * 1_000) }
        let summary = recorder.summary
        #expect(summary.count == 1_000)
        #expect(summary.p50 == 500)
        #expect(summary.p99 == 990)
        #expect(summary.p999 == 999)
        #expect(summary.max == 1_000)
        #expect(abs(summary.mean - 500.5) < 1)
    }

    @Test("an empty histogram summarises to zeros")
    func emptyLatency() {
        #expect(LatencyRecorder().summary == LatencySummary(count: 0, p50: 0, p99: 0, p999: 0, max: 0, mean: 0))
    }

    @Test("steal and busy shares come from the difference of two /proc/stat samples")
    func steal() throws {
        let before = try #require(HostCPUSample.parse("cpu  100 0 100 700 0 0 0 100 0 0"))
        let after = try #require(HostCPUSample.parse("cpu  200 0 200 1300 100 0 0 200 0 0"))
        // 1,000 jiffies passed: 100 stolen, 600 idle, 100 iowait.
        #expect(before.stealPercent(until: after) == 10)
        #expect(before.busyPercent(until: after) == 30)
        #expect(HostCPUSample.parse("intr 1 2 3") == nil)
    }

    @Test("process CPU time is read after the command name, which may hold spaces")
    func processStat() {
        let stat = "4242 (mock chat) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 1 0 100 0 0"
        #expect(ProcessProbe.cpuSeconds(fromStat: stat, ticksPerSecond: 100) == 3)
    }

    @Test("the generator's CPU time includes that of a worker process started in the window")
    func generatorCPUIncludesWorkers() throws {
        let start = WindowSample.take(servers: [])
        let worker = Process()
        worker.executableURL = URL(fileURLWithPath: "/bin/sh")
        worker.arguments = ["-c", "while :; do :; done"]
        try worker.run()
        defer {
            kill(worker.processIdentifier, SIGKILL)
            worker.waitUntilExit()
        }
        let probe = ProcessProbe(pid: worker.processIdentifier)
        var workerCPU = 0.0
        let deadline = Date().addingTimeInterval(10)
        while workerCPU < 0.05, Date() < deadline { workerCPU = probe.cpuSeconds() ?? 0 }
        #expect(workerCPU >= 0.05)

        let end = WindowSample.take(servers: [], workers: [probe])
        let generatorCPU = try #require(MeasuredWindow(start: start, end: end).generatorCPUSeconds)
        #expect(generatorCPU >= workerCPU)
    }

    @Test("reports render as aligned text and as JSON with the same figures")
    func report() throws {
        let report = BenchReport(mode: "ping", sections: [
            .init("results", "Results", [
                .init("replies", .integer(1_234_567), "replies"),
                .init("p99Micros", .double(1_250.5), "p99", unit: "µs"),
                .init("missing", .null, "server CPU", unit: "µs"),
            ]),
        ], notes: ["a note"])
        #expect(report.text.contains("  replies     1,234,567\n"))
        #expect(report.text.contains("  p99         1,250.5 µs\n"))
        #expect(report.text.contains("  server CPU  -\n"))
        #expect(report.text.contains("note: a note"))
        let json = try JSONParser.parse(report.jsonText)
        #expect(json["mode"] == "ping")
        #expect(json["completed"] == true)
        #expect(json["results"]?["replies"] == .integer(1_234_567))
        #expect(json["results"]?["missing"] == .null)
    }

    @Test("numbers are formatted for people")
    func formatting() {
        #expect(BenchReport.format(.double(0.0123)) == "0.012")
        #expect(BenchReport.format(.double(12.345)) == "12.35")
        #expect(BenchReport.format(.double(250_000)) == "250,000")
        #expect(BenchReport.format(.double(-1.5)) == "-1.50")
        #expect(BenchReport.format(.integer(-1_000)) == "-1,000")
        #expect(BenchReport.format(.bool(true)) == "yes")
    }
}
