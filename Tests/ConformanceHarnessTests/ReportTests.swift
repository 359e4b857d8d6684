#if canImport(FoundationXML)
import FoundationXML
#endif
import ChatProtocol
import ConformanceHarness
import Foundation
import MockChatCore
import Testing

/// One verdict of each kind, counted the same way by the console summary, the JSON,
/// the JUnit XML and the HTML page.
@Suite struct ReportTests {
    func results() throws -> [ScenarioResult] {
        let runner = Package.runner()
        let pass = runner.run(try Package.load("Fixtures/scenarios/connection/auto-login-connects.yaml"))
        let fail = runner.run(try Package.load("Tests/ConformanceHarnessTests/Fixtures/wrong-expectation.yaml"))
        var xfail = fail
        xfail.id = "harness/xfail"
        xfail.verdict = .expectedFailure
        var xpass = pass
        xpass.id = "harness/xpass"
        xpass.verdict = .unexpectedPass
        let loaded = ScenarioLoader.load([ScenarioSource(path: "scenarios/harness/broken.yaml", text: "id: [unclosed")])
        let broken = ScenarioResult(broken: try #require(loaded.broken.first))
        return [pass, fail, xfail, xpass, broken]
    }

    @Test func everyReportCountsTheSameBuckets() throws {
        let results = try results()
        let console = ConsoleReport.render(results, wallSeconds: 1)
        #expect(console.split(separator: "\n").last == "scenarios: 1 passed, 1 failed, 0 skipped, 1 xfail, 1 xpass, 1 errors")
        let json = try JSONParser.parse(Array(JSONReport.render(results, wallSeconds: 1).utf8))
        let summary = try #require(json["summary"])
        #expect(summary["passed"] == 1 && summary["failed"] == 1 && summary["skipped"] == 0)
        #expect(summary["expectedFailures"] == 1 && summary["unexpectedPasses"] == 1 && summary["errors"] == 1)
        let xml = try XMLDocument(xmlString: JUnitReport.render(results, wallSeconds: 1), options: [])
        let root = try #require(xml.rootElement())
        // JUnit: xpass is a failure, xfail a skip, a broken file an error.
        #expect(root.attribute(forName: "failures")?.stringValue == "2")
        #expect(root.attribute(forName: "skipped")?.stringValue == "1")
        #expect(root.attribute(forName: "errors")?.stringValue == "1")
        let error = try xml.nodes(forXPath: "//testcase[@name='harness/broken']/error")
        #expect(error.count == 1)
        #expect(error.first?.stringValue?.contains("broken.yaml:2:1: not valid YAML") == true)
    }

    @Test func everyReportNamesTheMockChatThatRanIt() throws {
        let results = try results()
        let json = try JSONParser.parse(Array(JSONReport.render(results, wallSeconds: 1).utf8))
        #expect(json["mockchat"]?["version"] == .string(BuildInfo.version))
        #expect(json["mockchat"]?["commit"] == .string(BuildInfo.commit))
        let xml = try XMLDocument(xmlString: JUnitReport.render(results, wallSeconds: 1), options: [])
        let version = try xml.nodes(forXPath: "//testsuite/properties/property[@name='mockchat.version']/@value")
        #expect(version.first?.stringValue == BuildInfo.version)
        let commit = try xml.nodes(forXPath: "//testsuite/properties/property[@name='mockchat.commit']/@value")
        #expect(commit.first?.stringValue == BuildInfo.commit)
        let html = HTMLReport.render(results, wallSeconds: 1)
        let foot = try XMLDocument(xmlString: html, options: []).nodes(forXPath: "//p[@class='foot']").first?.stringValue
        #expect(foot?.hasSuffix("mockchat \(BuildInfo.description)") == true)
    }

    @Test func htmlReportParsesAndHighlightsTheFailingStep() throws {
        let results = try results()
        let html = HTMLReport.render(results, wallSeconds: 1)
        #expect(!html.contains("http://") || !html.contains("src=\"http"))
        #expect(!html.contains("<script"))
        let document = try XMLDocument(xmlString: html, options: [])
        let summary = try document.nodes(forXPath: "//p[@id='summary']").first?.stringValue
        #expect(summary == RunSummary(results).line)
        let areas = try document.nodes(forXPath: "//table[@id='areas']/tbody/tr")
        #expect(areas.count == 2)  // connection, harness
        let failing = try #require(try document.nodes(forXPath: "//section[@id='harness/wrong-expectation']").first as? XMLElement)
        #expect(failing.attribute(forName: "data-verdict")?.stringValue == "failed")
        #expect(try failing.nodes(forXPath: ".//cite").first?.stringValue == "000_b8b030ded7652e86.txt, Default SDK behaviour")
        // One lane per client plus the server, and the failing step marked.
        let lanes = try failing.nodes(forXPath: ".//*[local-name()='text'][@class='lane']").compactMap(\.stringValue)
        #expect(lanes == ["server", "a"])
        let highlighted = try failing.nodes(forXPath: ".//*[local-name()='g'][contains(@class,'failed-step')]")
        #expect(highlighted.count == 1)
        #expect(highlighted.first?.stringValue?.contains("4: ") == true)
        let frames = try failing.nodes(forXPath: ".//*[local-name()='g'][contains(@class,'request')]")
        #expect(frames.contains { $0.stringValue?.contains("login alice") == true })
        // The passing scenario has no highlight.
        let passing = try #require(try document.nodes(forXPath: "//section[@id='connection/auto/login-connects']").first)
        #expect(try passing.nodes(forXPath: ".//*[contains(@class,'failed-step')]").isEmpty)
    }
}
