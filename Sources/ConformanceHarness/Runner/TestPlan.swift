import Foundation

/// What a `mockchat test` run covers: the scenarios that loaded, the files that did
/// not (each becomes an `error` verdict), and the ids expected to fail.
public struct TestPlan: Sendable {
    public var scenarios: [Scenario]
    /// One `error` result per file that could not be loaded.
    public var broken: [ScenarioResult]
    public var expectedFailures: Set<String> = []

    /// Loads `paths` (none: the built-in catalogue), keeps the scenarios whose id
    /// matches `filter`, and reads the expected-failure list (`expectedFailuresFile`,
    /// else `expected-failures.txt` beside the scenarios when there is one).
    ///
    /// Throws when a path does not exist, when `filter` matches nothing, or when the
    /// list names an id that no scenario has: each would make a green run mean nothing.
    public static func make(paths: [String], filter: String?, expectedFailuresFile: String?) throws(ScenarioError) -> TestPlan {
        var sources: [ScenarioSource]
        var listText: (origin: String, text: String)?
        if paths.isEmpty {
            sources = EmbeddedCatalogue.files.filter { !$0.path.hasSuffix(".txt") }
                .map { ScenarioSource(path: "scenarios/" + $0.path, text: $0.text) }
            listText = EmbeddedCatalogue.files.first { $0.path == "expected-failures.txt" }
                .map { ("scenarios/expected-failures.txt", $0.text) }
        } else {
            sources = try ScenarioLoader.sources(paths: paths)
            let besides = paths.first.map { $0 + "/expected-failures.txt" }
            if let besides, FileManager.default.fileExists(atPath: besides) { listText = try read(besides) }
        }
        if let expectedFailuresFile { listText = try read(expectedFailuresFile) }
        let (scenarios, broken) = ScenarioLoader.load(sources)
        var plan = TestPlan(scenarios: scenarios, broken: broken.map(ScenarioResult.init(broken:)))
        if let (origin, text) = listText {
            let known = Set(scenarios.map(\.id) + plan.broken.map(\.id))
            for (line, id) in CatalogueRunner.expectedFailureLines(text) {
                guard known.contains(id) else {
                    let near = Suggestion.closest(to: id, among: known.sorted()).map { " (did you mean '\($0)'?)" } ?? ""
                    throw ScenarioError("\(origin):\(line): '\(id)' is not the id of any scenario\(near); remove or fix it")
                }
                plan.expectedFailures.insert(id)
            }
        }
        if let filter {
            let total = plan.scenarios.count + plan.broken.count
            plan.scenarios = plan.scenarios.filter { Glob.matches($0.id, pattern: filter) }
            plan.broken = plan.broken.filter { Glob.matches($0.id, pattern: filter) }
            if plan.scenarios.isEmpty && plan.broken.isEmpty {
                throw ScenarioError("--filter '\(filter)' matches none of the \(total) scenarios (ids look like area/topic/case; * and ? are wildcards)")
            }
        }
        return plan
    }

    private static func read(_ path: String) throws(ScenarioError) -> (String, String) {
        guard let data = FileManager.default.contents(atPath: path) else { throw ScenarioError("cannot read \(path)") }
        return (path, String(decoding: data, as: UTF8.self))
    }
}
