import ChatProtocol
import MockChatCore

/// The machine-readable report: the MockChat that ran, every result with its verdict and timings.
public enum JSONReport {
    public static func render(_ results: [ScenarioResult], wallSeconds: Double) -> String {
        let entries: [JSONValue] = results.map { result in
            var object = JSONObject([
                ("id", .string(result.id)), ("title", .string(result.title)), ("source", .string(result.source)),
                ("path", .string(result.path)), ("verdict", .string(result.verdict.rawValue)),
                ("wallSeconds", .double(result.wallSeconds)), ("virtualSeconds", .double(result.virtualSeconds)),
            ])
            if let message = result.message { object["message"] = .string(message) }
            if let step = result.failedStep { object["failedStep"] = .integer(Int64(step)) }
            if !result.rules.isEmpty { object["rules"] = .array(result.rules.map(JSONValue.string)) }
            return .object(object)
        }
        let counts = RunSummary(results)
        let summary = JSONValue.object(JSONObject([
            ("passed", .integer(Int64(counts.passed))), ("failed", .integer(Int64(counts.failed))),
            ("skipped", .integer(Int64(counts.skipped))), ("expectedFailures", .integer(Int64(counts.expectedFailures))),
            ("unexpectedPasses", .integer(Int64(counts.unexpectedPasses))), ("errors", .integer(Int64(counts.errors))),
            ("deviations", .integer(Int64(counts.deviations))), ("waived", .integer(Int64(counts.waived))),
            ("notApplicable", .integer(Int64(counts.notApplicable))),
            ("wallSeconds", .double(wallSeconds)),
        ]))
        return JSONValue.object(JSONObject([
            ("mockchat", .object(JSONObject([("version", .string(BuildInfo.version)), ("commit", .string(BuildInfo.commit))]))),
            ("summary", summary), ("results", .array(entries)),
        ])).serialized() + "\n"
    }
}
