import Foundation
import MockChatCore

/// One self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched):
/// counts by area, then each scenario with its source citation, verdict, failure
/// message and a sequence diagram of the run — a lane per client, one for the server,
/// rows at virtual times, the failing step highlighted.
public enum HTMLReport {
    /// Rows drawn per diagram; longer runs show their first rows and a note.
    static let rowLimit = 300

    public static func render(_ results: [ScenarioResult], wallSeconds: Double) -> String {
        let summary = RunSummary(results)
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"/><title>mockchat scenarios</title>
            <style>\(style)</style></head><body>
            <h1>mockchat scenarios</h1>
            <p id="summary" class="\(summary.isFailure ? "failed" : "passed")">\(escape(summary.line))</p>
            <table id="areas"><thead><tr><th>area</th><th>passed</th><th>failed</th><th>deviation</th><th>waived</th><th>n/a</th><th>skipped</th><th>xfail</th><th>xpass</th><th>errors</th></tr></thead><tbody>

            """
        for area in Set(results.map(\.area)).sorted() {
            let counts = RunSummary(results.filter { $0.area == area })
            html += "<tr data-area=\"\(escape(area))\"><td>\(escape(area))</td><td>\(counts.passed)</td><td>\(counts.failed)</td>"
                + "<td>\(counts.deviations)</td><td>\(counts.waived)</td><td>\(counts.notApplicable)</td>"
                + "<td>\(counts.skipped)</td><td>\(counts.expectedFailures)</td><td>\(counts.unexpectedPasses)</td><td>\(counts.errors)</td></tr>\n"
        }
        html += "</tbody></table>\n"
        // Failures first, then the rest in id order.
        let ordered = results.filter(\.isFailure) + results.filter { !$0.isFailure }
        for result in ordered {
            html += section(result)
        }
        html += String(format: "<p class=\"foot\">%d scenarios, wall time %.2f s; ", results.count, wallSeconds)
            + "mockchat \(escape(BuildInfo.description))</p>\n</body></html>\n"
        return html
    }

    private static func section(_ result: ScenarioResult) -> String {
        var html = "<section class=\"scenario \(result.verdict.rawValue)\" id=\"\(escape(result.id))\" data-verdict=\"\(result.verdict.rawValue)\">\n"
        html += "<h2><span class=\"verdict\">\(ConsoleReport.label(result.verdict))</span> \(escape(result.id))</h2>\n"
        html += "<p class=\"title\">\(escape(result.title))</p>\n"
        html += "<p class=\"source\">source: <cite>\(escape(result.source))</cite> — <code>\(escape(result.path))</code></p>\n"
        for rule in result.rules { html += "<p class=\"rule\">rule: \(escape(rule))</p>\n" }
        if let message = result.message { html += "<pre class=\"message\">\(escape(message))</pre>\n" }
        if !result.timeline.isEmpty { html += diagram(result) }
        return html + "</section>\n"
    }

    private static func diagram(_ result: ScenarioResult) -> String {
        var lanes = ["server"] + result.lanes
        for event in result.timeline where event.lane != "steps" && !lanes.contains(event.lane) { lanes.append(event.lane) }
        let left = 300, laneWidth = 150, rowHeight = 18
        let x = Dictionary(lanes.enumerated().map { ($0.element, left + 60 + $0.offset * laneWidth) }, uniquingKeysWith: { a, _ in a })
        let rows = Array(result.timeline.prefix(rowLimit))
        let width = left + 60 + lanes.count * laneWidth + 40
        let height = 30 + rows.count * rowHeight + 10
        var svg = "<svg class=\"sequence\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\">\n"
        for lane in lanes {
            let at = x[lane]!
            svg += "<text class=\"lane\" x=\"\(at)\" y=\"16\" text-anchor=\"middle\">\(escape(lane))</text>"
            svg += "<line class=\"lifeline\" x1=\"\(at)\" y1=\"22\" x2=\"\(at)\" y2=\"\(height)\"/>\n"
        }
        for (index, event) in rows.enumerated() {
            let y = 30 + index * rowHeight + rowHeight / 2
            let time = String(format: "%.3fs", event.at)
            svg += "<g class=\"row \(event.kind.rawValue)\(event.failed ? " failed-step" : "")\">"
            svg += "<text class=\"time\" x=\"4\" y=\"\(y + 4)\">\(time)</text>"
            let server = x["server"]!, lane = x[event.lane] ?? server
            switch event.kind {
            case .step:
                if event.failed {
                    svg += "<rect class=\"highlight\" x=\"60\" y=\"\(y - rowHeight / 2)\" width=\"\(width - 60)\" height=\"\(rowHeight)\"/>"
                }
                svg += "<text class=\"step\" x=\"62\" y=\"\(y + 4)\">\(escape(String(event.label.prefix(40))))<title>\(escape(event.label))</title></text>"
            case .request, .reply:
                let (from, to) = event.kind == .request ? (lane, server) : (server, lane)
                svg += "<line class=\"arrow\" x1=\"\(from)\" y1=\"\(y)\" x2=\"\(to)\" y2=\"\(y)\" marker-end=\"url(#head)\"/>"
                svg += "<text class=\"label\" x=\"\((from + to) / 2)\" y=\"\(y - 2)\" text-anchor=\"middle\">\(escape(String(event.label.prefix(28))))<title>\(escape(event.label))</title></text>"
            case .close, .fault:
                svg += "<text class=\"mark\" x=\"\(lane)\" y=\"\(y + 4)\" text-anchor=\"middle\">✕</text>"
                svg += "<text class=\"label\" x=\"\(lane + 10)\" y=\"\(y + 4)\">\(escape(String(event.label.prefix(34))))</text>"
            case .clock:
                svg += "<line class=\"clockline\" x1=\"60\" y1=\"\(y)\" x2=\"\(width - 20)\" y2=\"\(y)\"/>"
                svg += "<text class=\"label\" x=\"\(left)\" y=\"\(y - 2)\">\(escape(event.label))</text>"
            }
            svg += "</g>\n"
        }
        svg += "<defs><marker id=\"head\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\"/></marker></defs>"
        svg += "</svg>\n"
        let more = result.timeline.count > rowLimit ? "<p class=\"more\">\(result.timeline.count - rowLimit) more rows not drawn; see --trace-dir</p>\n" : ""
        return "<div class=\"diagram\">\n" + svg + more + "</div>\n"
    }

    private static func escape(_ text: String) -> String { JUnitReport.escape(text) }

    private static let style = """
        body{font:14px/1.4 sans-serif;margin:20px;color:#222}
        #summary{font-weight:bold;font-size:16px}#summary.failed{color:#b00}#summary.passed{color:#070}
        table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 10px;text-align:right}td:first-child{text-align:left}
        section.scenario{border-top:1px solid #ddd;margin-top:14px}
        section.failed h2,section.error h2,section.unexpected-pass h2{color:#b00}
        section.passed h2{color:#070}section.deviation h2{color:#a60}section.waived h2,section.not-applicable h2{color:#666}
        .rule{margin:2px 0;font-size:13px;color:#333}h2{font-size:15px;margin:8px 0 2px}
        .verdict{display:inline-block;min-width:52px}
        pre.message{background:#fff3f3;border-left:3px solid #b00;padding:6px;white-space:pre-wrap}
        .diagram{overflow-x:auto}svg.sequence{font:11px monospace}
        .lane{font-weight:bold;font-size:12px}.lifeline{stroke:#bbb;stroke-dasharray:3 3}
        .arrow{stroke:#246;stroke-width:1.2}.reply .arrow{stroke:#264}
        .time{fill:#888}.step{fill:#555}.failed-step .step{fill:#b00;font-weight:bold}
        rect.highlight{fill:#fdd}.mark{fill:#b00}.clockline{stroke:#c90;stroke-dasharray:6 3}
        .fault .label{fill:#b00}
        """
}
