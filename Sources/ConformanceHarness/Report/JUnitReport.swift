import Foundation
import MockChatCore

/// JUnit XML, as CI systems read it: one `<testcase>` per scenario, classed by area.
public enum JUnitReport {
    public static func render(_ results: [ScenarioResult], wallSeconds: Double) -> String {
        document([(name: "conformance", properties: [], results: results, wallSeconds: wallSeconds)], wallSeconds: wallSeconds)
    }

    /// One `<testsuite>` per entry (`mockchat matrix`: one per SDK), each with its own properties.
    public static func document(_ suites: [(name: String, properties: [(String, String)], results: [ScenarioResult], wallSeconds: Double)],
                                wallSeconds: Double) -> String {
        let all = suites.flatMap(\.results)
        let (failures, errors, skipped) = counts(all)
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += #"<testsuites name="mockchat" tests="\#(all.count)" failures="\#(failures)" errors="\#(errors)" skipped="\#(skipped)" time="\#(seconds(wallSeconds))">"# + "\n"
        for suite in suites {
            xml += self.suite(suite.name, properties: suite.properties, results: suite.results, wallSeconds: suite.wallSeconds)
        }
        xml += "</testsuites>\n"
        return xml
    }

    /// JUnit has no xfail/xpass: an expected failure is a skip, an unexpected pass a failure.
    /// A deviation, a waiver and a scenario that does not apply are skips whose message says which.
    private static func counts(_ results: [ScenarioResult]) -> (failures: Int, errors: Int, skipped: Int) {
        let counts = RunSummary(results)
        return (counts.failed + counts.unexpectedPasses, counts.errors,
                counts.skipped + counts.expectedFailures + counts.deviations + counts.waived + counts.notApplicable)
    }

    private static func suite(_ name: String, properties: [(String, String)], results: [ScenarioResult], wallSeconds: Double) -> String {
        let (failures, errors, skipped) = counts(results)
        var xml = #"  <testsuite name="\#(escape(name))" tests="\#(results.count)" failures="\#(failures)" errors="\#(errors)" skipped="\#(skipped)" time="\#(seconds(wallSeconds))">"# + "\n"
        xml += "    <properties>\n"
        for (key, value) in [("mockchat.version", BuildInfo.version), ("mockchat.commit", BuildInfo.commit)] + properties {
            xml += #"      <property name="\#(escape(key))" value="\#(escape(value))"/>"# + "\n"
        }
        xml += "    </properties>\n"
        for result in results {
            xml += #"    <testcase classname="\#(escape(result.area))" name="\#(escape(result.id))" file="\#(escape(result.path))" time="\#(seconds(result.wallSeconds))">"#
            let cited = result.rules.map { "rule: " + $0 }
            let detail = escape((cited + [result.message ?? "", result.traceTail.joined(separator: "\n")]).joined(separator: "\n"))
            switch result.verdict {
            case .passed:
                break
            case .failed, .unexpectedPass:
                xml += "\n" + #"      <failure message="\#(escape(firstLine(result.message)))" type="\#(result.verdict.rawValue)">\#(detail)</failure>"# + "\n    "
            case .error:
                xml += "\n" + #"      <error message="\#(escape(firstLine(result.message)))" type="error">\#(detail)</error>"# + "\n    "
            case .skipped, .expectedFailure, .deviation, .waived, .notApplicable:
                let why = result.rules.first.map { "rule " + $0 } ?? firstLine(result.message)
                xml += "\n" + #"      <skipped message="\#(escape(result.verdict.rawValue + ": " + why))"/>"# + "\n    "
            }
            xml += "</testcase>\n"
        }
        xml += "  </testsuite>\n"
        return xml
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.3f", value) }

    private static func firstLine(_ text: String?) -> String {
        String((text ?? "").split(separator: "\n").first ?? "")
    }

    /// Escapes text for XML attributes and content; drops characters XML 1.0 forbids.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value >= 0x20 && !(0xFFFE...0xFFFF).contains(scalar.value) { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}
