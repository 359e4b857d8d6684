import Foundation

/// The human summary: failures in detail, a table per area, and the closing count line.
public enum ConsoleReport {
    /// The full text printed after a run.
    public static func render(_ results: [ScenarioResult], wallSeconds: Double) -> String {
        var lines: [String] = []
        for result in results where result.isFailure || result.verdict == .expectedFailure {
            lines.append("")
            lines.append("\(label(result.verdict)) \(result.id)  (\(result.path))")
            lines.append("  \(result.title)")
            lines.append("  source: \(result.source)")
            if let message = result.message {
                lines += message.split(separator: "\n", omittingEmptySubsequences: false).map { "  \($0)" }
            }
            if !result.traceTail.isEmpty {
                lines.append("  last trace lines:")
                lines += result.traceTail.map { "    \($0)" }
            }
        }
        lines.append("")
        let areas = Array(Set(results.map(\.area))).sorted()
        let width = max(8, areas.map(\.count).max() ?? 0)
        lines.append("area".padding(toLength: width, withPad: " ", startingAt: 0) + "  passed  failed  skipped  xfail")
        for area in areas {
            let group = results.filter { $0.area == area }
            lines.append(area.padding(toLength: width, withPad: " ", startingAt: 0)
                         + column(group, [.passed], 8) + column(group, [.failed, .unexpectedPass], 8)
                         + column(group, [.skipped], 9) + column(group, [.expectedFailure], 7))
        }
        let walls = results.map(\.wallSeconds).sorted()
        let median = walls.isEmpty ? 0 : walls[walls.count / 2]
        let virtual = results.map(\.virtualSeconds).reduce(0, +)
        lines.append(String(format: "wall time %.2f s for %d scenarios (median %.1f ms each), %.0f s of virtual time",
                            wallSeconds, results.count, median * 1000, virtual))
        lines.append(summaryLine(results))
        return lines.joined(separator: "\n")
    }

    /// `scenarios: N passed, N failed, N skipped`: the last line of every run.
    /// Expected failures count as skipped there and are listed in the table.
    public static func summaryLine(_ results: [ScenarioResult]) -> String {
        let passed = results.filter { $0.verdict == .passed }.count
        let failed = results.filter(\.isFailure).count
        let skipped = results.filter { $0.verdict == .skipped || $0.verdict == .expectedFailure }.count
        return "scenarios: \(passed) passed, \(failed) failed, \(skipped) skipped"
    }

    static func label(_ verdict: ScenarioResult.Verdict) -> String {
        switch verdict {
        case .passed: "PASS"
        case .failed: "FAIL"
        case .skipped: "SKIP"
        case .expectedFailure: "XFAIL"
        case .unexpectedPass: "XPASS"
        }
    }

    private static func column(_ results: [ScenarioResult], _ verdicts: Set<ScenarioResult.Verdict>, _ width: Int) -> String {
        let count = String(results.filter { verdicts.contains($0.verdict) }.count)
        return String(repeating: " ", count: max(1, width - count.count)) + count
    }
}
