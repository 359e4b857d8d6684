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

    /// The level of a difference whose action applied `rules`, with `waived` declared
    /// in the manifest. A driver that crashed, hung or wrote junk is always a failure.
    public static func of(rules: [String], badDriver: Bool, book: RuleBook, waived: Set<String>) -> DifferenceLevel {
        if badDriver { return .failure }
        guard !rules.isEmpty else { return .uncited }
        let binding = rules.filter { !waived.contains($0) }
        guard !binding.isEmpty else { return .waived }
        let levels = binding.map { book.rule($0)?.level }
        if levels.contains(where: { $0 == nil }) { return .uncited }
        return levels.allSatisfy { $0 == .documented } ? .failure : .deviation
    }
}
