import ConformanceHarness

/// How a difference between an SDK and the reference model counts, by the levels of
/// the rule-book rules the model applied at that action (docs/FUZZING.md, "Levels").
public enum DifferenceLevel: String, Sendable, CaseIterable {
    /// The model applied only documented rules there: the SDK breaks the documents.
    case failure
    /// A decision or parameter rule was involved: the SDK may differ by declaring it.
    case deviation
    /// Every rule involved is waived in the SDK's manifest: not reported.
    case waived
    /// The model cited no rule there: a rule the model applies is missing from the
    /// rule book (or the model does not cite it), a defect of the rule book.
    case uncited

    /// The level of a difference whose action applied `rules`, graded as `mockchat test`
    /// grades a failed step (``Verdicts/grade(_:manifest:)``) with the SDK's manifest.
    /// A driver that crashed, hung or wrote junk is always a failure; no rule, or an id the
    /// rule book does not know, is uncited.
    public static func of(rules: [String], badDriver: Bool, book: RuleBook, manifest: Manifest?) -> DifferenceLevel {
        if badDriver { return .failure }
        let known = rules.compactMap(book.rule)
        guard !known.isEmpty, known.count == rules.count else { return .uncited }
        switch Verdicts.grade(known, manifest: manifest).verdict {
        case .waived: return .waived
        case .deviation: return .deviation
        default: return .failure
        }
    }
}
