import Foundation

/// The human summary: failures in detail, a table per area, and the closing count line.
public enum ConsoleReport {
    /// The full text printed after a run.
    public static func render(_ results: [ScenarioResult], wallSeconds: Double) -> String {
        var lines: [String] = []
        for result in results where result.isFailure || [.expectedFailure, .deviation, .waived].contains(result.verdict) {
            lines.append("")
            lines.append("\(label(result.verdict)) \(result.id)  (\(result.path))")
            if result.verdict != .error {
                lines.append("  \(result.title)")
                lines.append("  source: \(result.source)")
            }
            for rule in result.rules { lines.append("  rule: \(rule)") }
            if let message = result.message {
                lines += message.split(separator: "\n", omittingEmptySubsequences: false).map { "  \($0)" }
            }
            if !result.traceTail.isEmpty {
                lines.append("  server trace around the failure (pings left out):")
                lines += result.traceTail.map { "    \($0)" }
            }
            for (client, log) in result.clientLogs where !log.isEmpty {
                lines.append("  \(client) recent log:")
                lines += log.map { "    \($0)" }
            }
        }
        lines.append("")
        let areas = Array(Set(results.map(\.area))).sorted()
        let width = max(8, areas.map(\.count).max() ?? 0)
        lines.append("area".padding(toLength: width, withPad: " ", startingAt: 0) + "  passed  failed  deviation  waived  n/a  skipped  xfail  xpass  errors")
        for area in areas {
            let group = results.filter { $0.area == area }
            lines.append(area.padding(toLength: width, withPad: " ", startingAt: 0)
                         + column(group, [.passed], 8) + column(group, [.failed], 8)
                         + column(group, [.deviation], 11) + column(group, [.waived], 8) + column(group, [.notApplicable], 5)
                         + column(group, [.skipped], 9) + column(group, [.expectedFailure], 7)
                         + column(group, [.unexpectedPass], 7) + column(group, [.error], 8))
        }
        let walls = results.map(\.wallSeconds).sorted()
        let median = walls.isEmpty ? 0 : walls[walls.count / 2]
        let virtual = results.map(\.virtualSeconds).reduce(0, +)
        lines.append(String(format: "wall time %.2f s for %d scenarios (median %.1f ms each), %.0f s of virtual time",
                            wallSeconds, results.count, median * 1000, virtual))
        lines.append(summaryLine(results))
        return lines.joined(separator: "\n")
    }

    /// `scenarios: N passed, N failed, N skipped[, N xfail][, N xpass][, N errors]`:
    /// the last line of every run, with the same buckets as the table and the JSON.
    public static func summaryLine(_ results: [ScenarioResult]) -> String {
        RunSummary(results).line
    }

    static func label(_ verdict: ScenarioResult.Verdict) -> String {
        switch verdict {
        case .passed: "PASS"
        case .failed: "FAIL"
        case .skipped: "SKIP"
        case .expectedFailure: "XFAIL"
        case .unexpectedPass: "XPASS"
        case .error: "ERROR"
        case .deviation: "DEVIATION"
        case .waived: "WAIVED"
        case .notApplicable: "N/A"
        }
    }

    private static func column(_ results: [ScenarioResult], _ verdicts: Set<ScenarioResult.Verdict>, _ width: Int) -> String {
        let count = String(results.filter { verdicts.contains($0.verdict) }.count)
        return String(repeating: " ", count: max(1, width - count.count)) + count
    }
}
