import ChatProtocol
import ConformanceHarness
import Foundation
import MockChatCore

/// The matrix as Markdown, JSON, HTML and JUnit (one suite per SDK).
public enum MatrixReport {
    /// The short names of verdicts in tables.
    static func label(_ verdict: String) -> String {
        switch verdict {
        case "passed": "pass"
        case "failed": "FAIL"
        case "expected-failure": "xfail"
        case "unexpected-pass": "XPASS"
        default: verdict
        }
    }

    public static func markdown(_ matrix: Matrix) -> String {
        var out = "# Conformance matrix\n\n"
        out += "| SDK | name | version | manifest | " + verdictNames(matrix).joined(separator: " | ") + " | wall time |\n"
        out += "|---|---|---|---|" + verdictNames(matrix).map { _ in "---|" }.joined() + "---|\n"
        for column in matrix.columns {
            let totals = column.totals
            out += "| \(column.name) | \(column.sdkName) | \(column.sdkVersion) | \(column.manifest.map { "`\($0.serialized())`" } ?? "none") | "
            out += verdictNames(matrix).map { String(totals[$0] ?? 0) }.joined(separator: " | ")
            out += " | \(String(format: "%.1f", column.wallSeconds)) s |\n"
        }
        if !matrix.ruleRows.isEmpty { out += "\n" + markdownTable(matrix, rows: matrix.ruleRows, heading: "rule") }
        out += "\n" + markdownTable(matrix, rows: matrix.rows, heading: "scenario")
        return out
    }

    private static func markdownTable(_ matrix: Matrix, rows: [MatrixRow], heading: String) -> String {
        var out = "| \(heading) | " + matrix.columns.map(\.name).joined(separator: " | ") + " |\n"
        out += "|---|" + matrix.columns.map { _ in "---|" }.joined() + "\n"
        for row in rows {
            var id = row.differs ? "**\(row.id)** (differs)" : row.id
            if let level = row.level { id += " (\(level)): \(row.title)" }
            let cells = row.cells.map { cell in
                cell.verdict == "passed" ? "pass" : "\(label(cell.verdict)): \(oneLine(cell.message))"
            }
            out += "| \(id) | " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
        }
        return out
    }

    public static func json(_ matrix: Matrix) -> String {
        let sdks: [JSONValue] = matrix.columns.map { column in
            .object(JSONObject([
                ("name", .string(column.name)), ("sdk", .string(column.sdkName)), ("version", .string(column.sdkVersion)),
                ("manifest", column.manifest ?? .null),
                ("totals", .object(JSONObject(column.totals.sorted { $0.key < $1.key }.map { ($0.key, .integer(Int64($0.value))) }))),
                ("wallSeconds", .double(column.wallSeconds)), ("failed", .bool(column.isFailure)),
            ]))
        }
        func rows(_ rows: [MatrixRow]) -> JSONValue { .array(rows.map { row in
            .object(JSONObject([
                ("id", .string(row.id)), ("group", .string(row.group)), ("title", .string(row.title)),
                ("source", .string(row.source)), ("level", row.level.map { .string($0) } ?? .null), ("differs", .bool(row.differs)),
                ("cells", .object(JSONObject(zip(matrix.columns, row.cells).map { column, cell in
                    var object = JSONObject([("verdict", .string(cell.verdict))])
                    if let message = cell.message { object["message"] = .string(message) }
                    return (column.name, .object(object))
                }))),
            ]))
        }) }
        return JSONValue.object(JSONObject([
            ("mockchat", .object(JSONObject([("version", .string(BuildInfo.version)), ("commit", .string(BuildInfo.commit))]))),
            ("sdks", .array(sdks)), ("rules", rows(matrix.ruleRows)), ("rows", rows(matrix.rows)),
            ("failed", .bool(matrix.isFailure)),
        ])).serialized() + "\n"
    }

    public static func junit(_ matrix: Matrix) -> String {
        JUnitReport.document(matrix.columns.map { column in
            var properties = [("sdk.name", column.sdkName), ("sdk.version", column.sdkVersion)]
            if let manifest = column.manifest { properties.append(("sdk.manifest", manifest.serialized())) }
            return (name: column.name, properties: properties, results: column.results, wallSeconds: column.wallSeconds)
        }, wallSeconds: matrix.columns.map(\.wallSeconds).max() ?? 0)
    }

    public static func html(_ matrix: Matrix) -> String {
        let e = JUnitReport.escape
        var out = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>MockChat conformance matrix</title>
            <style>
            body { font: 14px system-ui, sans-serif; margin: 16px; color: #222; }
            table { border-collapse: collapse; table-layout: fixed; width: 100%; }
            col.row { width: 22%; }
            th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
            th { background: #eee; }
            td.passed { background: #dfd; }
            td.failed, td.error, td.unexpected-pass { background: #fdd; font-weight: bold; }
            td.skipped, td.not-run { background: #eee; color: #666; }
            td.expected-failure, td.deviation { background: #ffe9b3; }
            td.waived, td.not-applicable { background: #dde8ff; }
            tr.differs th.row { background: #ffd54f; }
            tr.differs td { outline: 2px solid #e0a000; outline-offset: -2px; }
            tr.group th { background: #444; color: #fff; }
            tr.part th { background: #246; color: #fff; font-size: 16px; }
            .msg { display: block; font-weight: normal; font-size: 11px; }
            summary { cursor: pointer; font-size: 11px; }
            pre { margin: 0; font-size: 11px; white-space: pre-wrap; }
            </style></head><body>
            <h1>MockChat conformance matrix</h1>
            <p>MockChat \(e(BuildInfo.version)) (\(e(BuildInfo.commit))). \(matrix.rows.count) scenarios,
            \(matrix.rows.filter(\.differs).count) on which the SDKs differ (highlighted); \(matrix.ruleRows.count) rules,
            \(matrix.ruleRows.filter(\.differs).count) differing.</p>
            <table><colgroup><col class="row"><col span="\(matrix.columns.count)"></colgroup><tr><th>SDK</th>
            """ + "\n"
        out += matrix.columns.map { "<th>\(e($0.name))</th>" }.joined() + "</tr>\n"
        out += "<tr><th>name, version</th>" + matrix.columns.map { "<td>\(e($0.sdkName)) \(e($0.sdkVersion))</td>" }.joined() + "</tr>\n"
        out += "<tr><th>manifest</th>" + matrix.columns.map { column in
            guard let manifest = column.manifest?.serialized() else { return "<td>none</td>" }
            return "<td><details><summary>\(manifest.utf8.count) bytes of JSON</summary><pre>\(e(manifest))</pre></details></td>"
        }.joined() + "</tr>\n"
        for verdict in verdictNames(matrix) {
            out += "<tr><th>\(e(verdict))</th>" + matrix.columns.map { "<td class=\"\(e(verdict))\">\($0.totals[verdict] ?? 0)</td>" }.joined() + "</tr>\n"
        }
        out += "<tr><th>wall time</th>" + matrix.columns.map { String(format: "<td>%.1f s</td>", $0.wallSeconds) }.joined() + "</tr>\n"
        if !matrix.ruleRows.isEmpty {
            out += "<tr class=\"part\"><th colspan=\"\(matrix.columns.count + 1)\">Rules (the worst verdict of the scenarios that name each)</th></tr>\n"
            out += htmlRows(matrix.ruleRows, columns: matrix.columns.count)
            out += "<tr class=\"part\"><th colspan=\"\(matrix.columns.count + 1)\">Scenarios</th></tr>\n"
        }
        out += htmlRows(matrix.rows, columns: matrix.columns.count)
        return out + "</table></body></html>\n"
    }

    /// Table rows under a heading row per group; rows on which the SDKs differ are marked.
    private static func htmlRows(_ rows: [MatrixRow], columns: Int) -> String {
        let e = JUnitReport.escape
        var out = ""
        var group = ""
        for row in rows {
            if row.group != group {
                group = row.group
                out += "<tr class=\"group\"><th colspan=\"\(columns + 1)\">\(e(group))</th></tr>\n"
            }
            out += "<tr class=\"\(row.differs ? "differs" : "same")\"><th class=\"row\" title=\"\(e(row.source))\">\(e(row.id))"
            out += "<span class=\"msg\">\(row.level.map { e($0) + ": " } ?? "")\(e(row.title))</span></th>"
            for cell in row.cells {
                let tip = [row.title, cell.message ?? ""].filter { !$0.isEmpty }.joined(separator: "\n")
                out += "<td class=\"\(e(cell.verdict))\" title=\"\(e(tip))\">\(e(label(cell.verdict)))"
                if cell.verdict != "passed", let message = cell.message { out += "<span class=\"msg\">\(e(oneLine(message)))</span>" }
                out += "</td>"
            }
            out += "</tr>\n"
        }
        return out
    }

    /// Every verdict some column has, passes first.
    private static func verdictNames(_ matrix: Matrix) -> [String] {
        let names = Set(matrix.columns.flatMap { $0.totals.keys })
        return names.sorted { ($0 == "passed" ? "" : $0) < ($1 == "passed" ? "" : $1) }
    }

    private static func oneLine(_ text: String?) -> String {
        String((text ?? "").split(separator: "\n").first ?? "").prefix(240).description
    }
}
