/// How a scenario's outcome becomes a verdict level (docs/SPECIFICATION.md, "Verdicts"):
/// pure functions of the scenario, its result, the rule book and the SDK's manifest.
public enum Verdicts {
    /// The rules a step rests on: those it names (`rule:`) and those owning the parameters it reads.
    public static func rules(of step: Step, in book: RuleBook) -> [Rule] {
        let named = step.rules.compactMap(book.rule)
        let owners = step.parameters.sorted().compactMap(book.parameterRule)
        return named + owners.filter { owner in !named.contains { $0.id == owner.id } }
    }

    /// Every rule a scenario names: its own and its steps'.
    public static func rules(of scenario: Scenario, in book: RuleBook) -> [Rule] {
        var seen: Set<String> = []
        return (scenario.rules.compactMap(book.rule) + scenario.steps.flatMap { rules(of: $0, in: book) })
            .filter { seen.insert($0.id).inserted }
    }

    /// Why the scenario does not apply to the SDK, as a not-applicable result, or nil when
    /// it does: it follows another profile, or needs a feature the manifest does not declare
    /// (a scenario needs the features of its rules).
    public static func notApplicable(_ scenario: Scenario, manifest: Manifest, book: RuleBook) -> ScenarioResult? {
        var result = ScenarioResult(id: scenario.id, title: scenario.title, source: scenario.source, path: scenario.path,
                                    verdict: .notApplicable)
        if let profile = manifest.profile, profile != scenario.profile {
            result.message = "the SDK follows profile \(profile) (\(manifest.origin)); this scenario checks \(scenario.profile)"
            return result
        }
        let needing = rules(of: scenario, in: book).filter { !manifest.implements($0.feature) }
        guard !needing.isEmpty else { return nil }
        let features = Array(Set(needing.map(\.feature))).sorted()
        result.message = "needs feature\(features.count == 1 ? "" : "s") \(features.joined(separator: ", ")), not declared in \(manifest.origin)"
        result.rules = needing.map(\.citation)
        return result
    }

    /// How a difference counts, by the rules it rests on (never empty): the one grading
    /// of `mockchat test` and `mockchat fuzz --sdk` (docs/SPECIFICATION.md, "Verdicts").
    /// - a documented rule among them: **failed**; a difference that rests on a documented
    ///   rule beside decisions cannot tell which one broke, so it fails;
    /// - only decisions and parameters, one of them waived by the manifest: **waived**, with the reason;
    /// - only decisions and parameters, a parameter's value declared by the manifest: **failed**
    ///   (the declared value is not honoured);
    /// - otherwise **deviation**: the SDK differs from MockChat's choice without saying so.
    /// The citations name the rules that decided it.
    public static func grade(_ resting: [Rule], manifest: Manifest?) -> (verdict: ScenarioResult.Verdict, citations: [String]) {
        if resting.contains(where: { $0.level == .documented }) { return (.failed, resting.map(\.citation)) }
        if let manifest {
            let waived = resting.filter { manifest.waivers[$0.id] != nil }
            if !waived.isEmpty { return (.waived, waived.map { "\($0.citation) — waived: \(manifest.waivers[$0.id]!)" }) }
            let declared = resting.compactMap { rule in
                rule.parameter.flatMap { parameter in manifest.parameters[parameter.name].map { (rule, parameter.name, $0) } }
            }
            if !declared.isEmpty { return (.failed, declared.map { "\($0.0.citation) — declared \($0.1): \($0.2)" }) }
        }
        return (.deviation, resting.map(\.citation))
    }

    /// A failed result graded by the rules its failing step rests on (``grade(_:manifest:)``);
    /// a step that rests on no rule fails, citing the scenario's documented rules (or all of
    /// its rules when it names no documented one). Any other verdict is returned as it is.
    public static func classify(_ result: ScenarioResult, scenario: Scenario, manifest: Manifest?, book: RuleBook) -> ScenarioResult {
        guard result.verdict == .failed else { return result }
        var graded = result
        let step = result.failedStep.flatMap { number in scenario.steps.first { $0.number == number } }
        let resting = step.map { rules(of: $0, in: book) } ?? []
        guard !resting.isEmpty else {
            let documented = scenario.rules.compactMap(book.rule).filter { $0.level == .documented }
            graded.rules = (documented.isEmpty ? scenario.rules.compactMap(book.rule) : documented).map(\.citation)
            return graded
        }
        (graded.verdict, graded.rules) = grade(resting, manifest: manifest)
        return graded
    }
}
