import ChatProtocol
import ConformanceHarness
import ConformanceMatrix
import Foundation
import Testing

/// The matrix built from two SDKs' results: which rows differ, and every report.
@Suite struct MatrixTests {
    static func result(_ id: String, _ verdict: ScenarioResult.Verdict, _ message: String? = nil) -> ScenarioResult {
        ScenarioResult(id: id, title: "title of \(id)", source: "000, Auto Mode", path: "\(id).yaml", verdict: verdict, message: message)
    }

    static let matrix = Matrix(columns: [
        MatrixColumn(name: "reference", sdkName: "mockchat-reference", sdkVersion: "1.0.0", manifest: nil,
                     results: [result("connection/a", .passed), result("presence/b", .passed)], wallSeconds: 1),
        MatrixColumn(name: "js", sdkName: "mockchat-js-sdk", sdkVersion: "0.1.0",
                     manifest: .object(JSONObject([("sdk", .string("js"))])),
                     results: [result("connection/a", .passed), result("presence/b", .failed, "expected 1 event\nmore")],
                     wallSeconds: 2),
    ])

    @Test func aRowDiffersWhenTheSDKsDisagree() {
        #expect(Self.matrix.rows.map(\.id) == ["connection/a", "presence/b"])
        #expect(Self.matrix.rows.map(\.differs) == [false, true])
        #expect(Self.matrix.isFailure)
        #expect(Self.matrix.rows[1].cells[1].message == "expected 1 event\nmore")
    }

    @Test func theReportsCarryVerdictsMessagesAndManifests() throws {
        let html = MatrixReport.html(Self.matrix)
        #expect(html.contains(#"<tr class="differs">"#))
        #expect(html.contains(#"<td class="failed" title="title of presence/b"#))
        #expect(html.contains("expected 1 event"))
        let markdown = MatrixReport.markdown(Self.matrix)
        #expect(markdown.contains("| **presence/b** (differs) | pass | FAIL: expected 1 event |"))
        let json = try JSONParser.parse(Array(MatrixReport.json(Self.matrix).utf8))
        #expect(json["rows"]?.arrayValue?[1]["cells"]?["js"]?["verdict"]?.stringValue == "failed")
        #expect(json["sdks"]?.arrayValue?[1]["manifest"]?["sdk"]?.stringValue == "js")
        let junit = MatrixReport.junit(Self.matrix)
        #expect(junit.components(separatedBy: "<testsuite ").count == 3)
        #expect(junit.contains(#"<testsuite name="js" tests="2" failures="1""#))
    }
}

/// A rule's row takes the worst verdict of the scenarios that name it, and cites the scenario.
@Suite struct MatrixRuleTests {
    @Test func aRuleFailsWhenOneOfItsScenariosFails() throws {
        let book = RuleBook.embedded
        let rule = try #require(book.rules.first)
        let scenarios = ["connection/a", "presence/b"].map { Scenario(id: $0, title: $0, source: "", rules: [rule.id], steps: []) }
        let matrix = Matrix(columns: MatrixTests.matrix.columns, scenarios: scenarios, ruleBook: book)
        #expect(matrix.ruleRows.map(\.id) == [rule.id])
        let row = try #require(matrix.ruleRows.first)
        #expect(row.title == rule.text)
        #expect(row.level == rule.level.rawValue)
        #expect(row.cells.map(\.verdict) == ["passed", "failed"])
        #expect(row.cells[1].message == "presence/b: expected 1 event\nmore")
        #expect(MatrixReport.html(matrix).contains("Rules (the worst verdict"))
    }
}
