/// The counts of a run, computed once and printed the same way by every report.
///
/// Each scenario lands in exactly one bucket: passed, failed, deviation, waived, not
/// applicable, error (not loaded or not set up), skipped, xfail (failed and listed as
/// expected) or xpass (listed but passed). `failed`, `error` and `xpass` make the run
/// fail; with `strict`, deviations too.
public struct RunSummary: Sendable, Equatable {
    public var passed = 0
    public var failed = 0
    public var errors = 0
    public var skipped = 0
    public var expectedFailures = 0
    public var unexpectedPasses = 0
    public var deviations = 0
    public var waived = 0
    public var notApplicable = 0

    public init(_ results: [ScenarioResult]) {
        for result in results {
            switch result.verdict {
            case .passed: passed += 1
            case .failed: failed += 1
            case .error: errors += 1
            case .skipped: skipped += 1
            case .expectedFailure: expectedFailures += 1
            case .unexpectedPass: unexpectedPasses += 1
            case .deviation: deviations += 1
            case .waived: waived += 1
            case .notApplicable: notApplicable += 1
            }
        }
    }

    /// Whether the run fails.
    public var isFailure: Bool { failed + errors + unexpectedPasses > 0 }

    /// Whether the run fails under `--strict`, where a deviation counts too.
    public var isStrictFailure: Bool { isFailure || deviations > 0 }

    /// `scenarios: N passed, N failed, N skipped`, then the other buckets when not empty.
    public var line: String {
        var text = "scenarios: \(passed) passed, \(failed) failed, \(skipped) skipped"
        if deviations > 0 { text += ", \(deviations) deviation\(deviations == 1 ? "" : "s")" }
        if waived > 0 { text += ", \(waived) waived" }
        if notApplicable > 0 { text += ", \(notApplicable) not applicable" }
        if expectedFailures > 0 { text += ", \(expectedFailures) xfail" }
        if unexpectedPasses > 0 { text += ", \(unexpectedPasses) xpass" }
        if errors > 0 { text += ", \(errors) errors" }
        return text
    }
}
