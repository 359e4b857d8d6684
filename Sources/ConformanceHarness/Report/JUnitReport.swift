import Foundation
import MockChatCore

/// JUnit XML, as CI systems read it: one `<testcase>` per scenario, classed by area.
public enum JUnitReport {
    public static func render(_ results: [ScenarioResult], wallSeconds: Double) -> String {
        // JUnit has no xfail/xpass: an expected failure is a skip, an unexpected pass a failure.
        // A deviation, a waiver and a scenario that does not apply are skips whose message says which.
        let counts = RunSummary(results)
        let failures = counts.failed + counts.unexpectedPasses
        let skipped = counts.skipped + counts.expectedFailures + counts.deviations + counts.waived + counts.notApplicable
        let errors = counts.errors
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += #"<testsuites name="mockchat" tests="\#(results.count)" failures="\#(failures)" errors="\#(errors)" skipped="\#(skipped)" time="\#(seconds(wallSeconds))">"# + "\n"
        xml += #"  <testsuite name="conformance" tests="\#(results.count)" failures="\#(failures)" errors="\#(errors)" skipped="\#(skipped)" time="\#(seconds(wallSeconds))">"# + "\n"
        xml += "    <properties>\n"
        xml += #"      <property name="mockchat.version" value="\#(escape(BuildInfo.version))"/>"# + "\n"
        xml += #"      <property name="mockchat.commit" value="\#(escape(BuildInfo.commit))"/>"# + "\n"
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
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.3f", value) }

    private static func firstLine(_ text: String?) -> String {
        String((text ?? "").split(separator: "\n").first ?? "")
    }

    /// Escapes text for XML attributes and content; drops characters XML 1.0 forbids.
    static func escape(_ text: String) -> String {
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
