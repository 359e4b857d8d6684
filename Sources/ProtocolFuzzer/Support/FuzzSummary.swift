import ChatProtocol
import ConformanceHarness
import Foundation

/// The summary lines printed at the end of a run.
public enum FuzzSummary {
    public static func model(_ report: ModelFuzzer.Report) -> [String] {
        var lines = [String(format: "model: %d steps in %d histories, %d divergences, %d crashes, %.1f s (%.0f steps/s)",
                            report.steps, report.histories, report.divergences, report.crashes, report.wallSeconds,
                            Double(report.steps) / max(report.wallSeconds, 0.001))]
        lines += bySignature(report.tally)
        for finding in report.findings {
            lines.append("  divergence (\(finding.signature)) " + foundAndShrunk(finding))
            lines.append("    " + (finding.path.map { "written to \($0)" } ?? "not written")
                + (finding.reproduces ? "; replays with the same failure" : "; WARNING: the written file does not fail the same way"))
            for line in finding.message.split(separator: "\n").prefix(4) { lines.append("    | " + line.prefix(200)) }
        }
        return lines + crashes(report.tally)
    }

    /// One line per kind of finding, with its count.
    static func bySignature(_ tally: FuzzCampaign.Tally) -> [String] {
        tally.divergencesBySignature.sorted { $0.key < $1.key }.map { "  \($0.value) × \($0.key)" }
    }

    /// When a finding showed, and how far it shrank.
    static func foundAndShrunk(_ finding: FuzzCampaign.Finding) -> String {
        "after \(finding.foundAfterSteps) steps, " + String(format: "%.1f s; ", finding.foundAfterSeconds)
            + "shrunk from \(finding.originalActions) to \(finding.shrunkActions) actions "
            + "(\(finding.scenarioSteps) scenario steps, \(finding.shrinkTests) runs, "
            + String(format: "%.1f s)", finding.shrinkSeconds)
    }

    /// The first crashes' messages.
    static func crashes(_ tally: FuzzCampaign.Tally) -> [String] {
        tally.crashMessages.prefix(5).map { "  crash: " + $0.prefix(300) }
    }

    public static func wire(_ report: WireFuzzer.Report, name: String = "wire") -> [String] {
        var lines = [String(format: "%@: %d inputs on %d connections, %d divergences, %d crashes, %.1f s (%.0f inputs/s)",
                            name, report.steps, report.connections, report.divergences, report.crashes, report.wallSeconds,
                            Double(report.steps) / max(report.wallSeconds, 0.001))]
        var stages: [String: (inputs: Int, kinds: Int)] = [:]
        for (label, count) in report.stepsByKind {
            let stage = String(label.prefix { $0 != "/" })
            stages[stage, default: (0, 0)].inputs += count
            stages[stage, default: (0, 0)].kinds += 1
        }
        let parts = stages.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.inputs) (\($0.value.kinds) kinds)" }
        if !parts.isEmpty { lines.append("  inputs: " + parts.joined(separator: ", ")) }
        for finding in report.findings.prefix(10) { lines.append("  divergence: " + finding.prefix(400)) }
        return lines + crashes(report.tally)
    }
}

extension FuzzSummary {
    public static func sdk(_ report: SDKFuzzer.Report) -> [String] {
        var lines = [String(format: "sdk: %@: %d steps in %d histories, %d differences, %d not repeatable, %d bad-driver runs, "
                            + "%d unsupported, %d crashes, %.1f s (%.0f steps/s)",
                            report.sdk, report.steps, report.histories, report.divergences, report.flaky, report.badDriverRuns,
                            report.unsupported, report.crashes, report.wallSeconds,
                            Double(report.steps) / max(report.wallSeconds, 0.001))]
        if !report.differencesByLevel.isEmpty {
            lines.append("  by level: " + DifferenceLevel.allCases.map { "\(report.differencesByLevel[$0] ?? 0) \($0.rawValue)" }
                .joined(separator: ", "))
        }
        lines += bySignature(report.tally)
        for (signature, place) in report.uncitedMessages.sorted(by: { $0.key < $1.key }) {
            lines.append("  rule book defect: a \(signature) difference where the model cited no rule (\(place))")
        }
        if report.flaky > 0 {
            lines.append("  \(report.flaky) differences did not show again on a second run (the SDK or its driver is not deterministic):")
            for message in report.flakyMessages { lines.append("    " + message.prefix(300)) }
        }
        if report.knownDifferences > 0 {
            lines.append("  \(report.knownDifferences) known differences (the baseline driver differs the same way; not reported)")
        }
        for finding in report.findings {
            lines.append("  \(finding.isBadDriver ? "bad driver" : finding.level.rawValue) (\(finding.signature)) in history "
                + "\(finding.historyNumber) " + foundAndShrunk(finding.shrunk))
            var verdict = finding.path.map { "written to \($0)" } ?? "not written"
            verdict += finding.reproduces ? "; fails the same way through the driver" : "; WARNING: the written file does not fail the same way"
            if finding.reproduces { verdict += finding.referencePasses ? ", passes on the reference model" : ", WARNING: fails on the reference model too" }
            if let passes = finding.baselinePasses { verdict += passes ? " and through the baseline" : ", WARNING: fails through the baseline" }
            lines.append("    " + verdict)
            if !finding.rules.isEmpty {
                lines.append("    rules the model applied there: " + finding.rules.map { id in
                    "\(id) (\(RuleBook.embedded.rule(id)?.level.rawValue ?? "not in the rule book"))"
                }.joined(separator: ", "))
            }
            for line in finding.message.split(separator: "\n").prefix(6) { lines.append("    | " + line.prefix(200)) }
        }
        if !report.refusedCommands.isEmpty {
            lines.append("  refused as unsupported (left out of the histories): " + report.refusedCommands.joined(separator: ", "))
        }
        let kinds = report.stepsByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        if !kinds.isEmpty { lines.append("  actions: " + kinds.joined(separator: ", ")) }
        for message in report.unsupportedMessages.prefix(3) { lines.append("  unsupported: " + message.prefix(300)) }
        return lines + crashes(report.tally)
    }
}

extension FuzzSummary {
    /// The summary of an SDK run as JSON, for scripts (scripts/probes/sdk-fuzz-table).
    public static func sdkJSON(_ report: SDKFuzzer.Report) -> JSONValue {
        [
            "sdk": .string(report.sdk), "seed": .integer(Int64(bitPattern: report.seed)),
            "steps": .integer(Int64(report.steps)), "histories": .integer(Int64(report.histories)),
            "differences": .integer(Int64(report.divergences)),
            "knownDifferences": .integer(Int64(report.knownDifferences)), "flaky": .integer(Int64(report.flaky)),
            "flakyMessages": .array(report.flakyMessages.map { .string($0) }), "badDriverRuns": .integer(Int64(report.badDriverRuns)),
            "unsupported": .integer(Int64(report.unsupported)), "crashes": .integer(Int64(report.crashes)),
            "wallSeconds": .double(report.wallSeconds),
            "refusedCommands": .array(report.refusedCommands.map { .string($0) }),
            "byLevel": .object(JSONObject(DifferenceLevel.allCases.map {
                ($0.rawValue, .integer(Int64(report.differencesByLevel[$0] ?? 0)))
            })),
            "uncited": .object(JSONObject(report.uncitedMessages.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            "bySignature": .object(JSONObject(report.divergencesBySignature.sorted { $0.key < $1.key }
                .map { ($0.key, .integer(Int64($0.value))) })),
            "findings": .array(report.findings.map { finding in
                [
                    "signature": .string(finding.signature), "badDriver": .bool(finding.isBadDriver),
                    "level": .string(finding.level.rawValue), "rules": .array(finding.rules.map { .string($0) }),
                    "history": .integer(Int64(finding.historyNumber)),
                    "foundAfterSteps": .integer(Int64(finding.foundAfterSteps)),
                    "foundAfterSeconds": .double(finding.foundAfterSeconds),
                    "originalActions": .integer(Int64(finding.originalActions)),
                    "shrunkActions": .integer(Int64(finding.shrunkActions)),
                    "shrinkRuns": .integer(Int64(finding.shrinkTests)), "shrinkSeconds": .double(finding.shrinkSeconds),
                    "path": finding.path.map { .string($0) } ?? .null, "reproduces": .bool(finding.reproduces),
                    "referencePasses": .bool(finding.referencePasses),
                    "baselinePasses": finding.baselinePasses.map { .bool($0) } ?? .null, "message": .string(finding.message),
                ]
            }),
        ]
    }
}
