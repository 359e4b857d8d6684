import ChatProtocol
import ConformanceHarness
import Dispatch
import Foundation
import Synchronization

/// One SDK's run of the catalogue: what it said about itself and its verdicts.
public struct MatrixColumn: Sendable {
    /// The name the user gave it (`--sdk NAME=COMMAND`).
    public var name: String
    /// The SDK's name and version from the driver's hello.
    public var sdkName: String
    public var sdkVersion: String
    /// The hello's `manifest` object, when the driver sent one.
    public var manifest: JSONValue?
    public var results: [ScenarioResult]
    public var wallSeconds: Double

    public init(name: String, sdkName: String, sdkVersion: String, manifest: JSONValue?, results: [ScenarioResult],
                wallSeconds: Double) {
        self.name = name
        self.sdkName = sdkName
        self.sdkVersion = sdkVersion
        self.manifest = manifest
        self.results = results
        self.wallSeconds = wallSeconds
    }

    /// How many results have each verdict.
    public var totals: [String: Int] {
        results.reduce(into: [:]) { $0[$1.verdict.rawValue, default: 0] += 1 }
    }

    /// Whether this SDK's run counts as failed (the test command's rule).
    public var isFailure: Bool { RunSummary(results).isFailure }
}

/// One cell: an SDK's verdict on one row, with the message of a non-pass.
public struct MatrixCell: Sendable {
    public var verdict: String
    public var message: String?
}

/// One row, with a cell per column: a scenario, or a rule of the rule book (its cells
/// the worst verdict of the scenarios that name it).
public struct MatrixRow: Sendable {
    public var id: String
    /// The area of a scenario, the feature of a rule.
    public var group: String
    /// A scenario's title, a rule's text.
    public var title: String
    public var source: String
    /// A rule's level (documented, decision, parameter); nil for a scenario.
    public var level: String?
    public var cells: [MatrixCell]

    /// Whether the SDKs disagree on this row.
    public var differs: Bool { Set(cells.map(\.verdict)).count > 1 }
}

/// The rows × SDKs table of `mockchat matrix`.
public struct Matrix: Sendable {
    public var columns: [MatrixColumn]
    /// A row per scenario.
    public var rows: [MatrixRow]
    /// A row per rule some scenario names, in rule book order.
    public var ruleRows: [MatrixRow] = []

    /// Rows in catalogue order (the first column's, then any id only a later one ran);
    /// with the scenarios and their rule book, a row per rule too.
    public init(columns: [MatrixColumn], scenarios: [Scenario] = [], ruleBook: RuleBook? = nil) {
        self.columns = columns
        var order: [String] = []
        var seen: Set<String> = []
        var first: [String: ScenarioResult] = [:]
        for column in columns {
            for result in column.results where !seen.contains(result.id) {
                seen.insert(result.id)
                order.append(result.id)
                first[result.id] = result
            }
        }
        let byColumn = columns.map { Dictionary($0.results.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a }) }
        rows = order.map { id in
            let result = first[id]!
            let cells = byColumn.map { results in
                results[id].map { MatrixCell(verdict: $0.verdict.rawValue, message: $0.message) }
                    ?? MatrixCell(verdict: "not-run", message: "this SDK's run has no such scenario")
            }
            return MatrixRow(id: id, group: result.area, title: result.title, source: result.source, cells: cells)
        }
        if let ruleBook { ruleRows = Self.ruleRows(ruleBook, scenarios: scenarios, byColumn: byColumn) }
    }

    /// Verdicts from the best to the worst; one not listed counts as a failure.
    static let severity = ["passed", "not-run", "skipped", "not-applicable", "waived", "expected-failure", "deviation",
                           "unexpected-pass", "failed", "error"]

    private static func ruleRows(_ book: RuleBook, scenarios: [Scenario], byColumn: [[String: ScenarioResult]]) -> [MatrixRow] {
        var naming: [String: [String]] = [:]
        for scenario in scenarios {
            for rule in Set(scenario.rules + scenario.steps.flatMap(\.rules)) { naming[rule, default: []].append(scenario.id) }
        }
        return book.rules.compactMap { rule in
            guard let ids = naming[rule.id] else { return nil }
            let cells = byColumn.map { results in
                let named = ids.compactMap { results[$0] }
                guard let worst = named.max(by: { rank($0.verdict.rawValue) < rank($1.verdict.rawValue) }) else {
                    return MatrixCell(verdict: "not-run", message: "none of its scenarios ran")
                }
                if worst.verdict == .passed { return MatrixCell(verdict: "passed", message: nil) }
                return MatrixCell(verdict: worst.verdict.rawValue, message: "\(worst.id): \(worst.message ?? worst.verdict.rawValue)")
            }
            return MatrixRow(id: rule.id, group: rule.feature, title: rule.text, source: rule.source, level: rule.level.rawValue,
                             cells: cells)
        }
    }

    private static func rank(_ verdict: String) -> Int { severity.firstIndex(of: verdict) ?? severity.count - 2 }

    /// Whether any SDK failed.
    public var isFailure: Bool { columns.contains(where: \.isFailure) }
}

/// Runs the catalogue through several drivers, at once where they allow it.
public struct MatrixRunner: Sendable {
    /// One SDK: its column name and where its driver comes from.
    public struct Entry: Sendable {
        public var name: String
        public var driver: CatalogueRunner.DriverSource
        public init(name: String, driver: CatalogueRunner.DriverSource) {
            self.name = name
            self.driver = driver
        }
    }

    public var options: CatalogueRunner.Options
    /// The rules the matrix has a row for.
    public var ruleBook: RuleBook?

    public init(options: CatalogueRunner.Options, ruleBook: RuleBook? = nil) {
        self.options = options
        self.ruleBook = ruleBook
    }

    /// Runs `scenarios` through every entry; `progress` gets each SDK's name with its results.
    public func run(_ entries: [Entry], scenarios: [Scenario],
                    progress: @escaping @Sendable (_ sdk: String, _ done: Int, _ total: Int, _ result: ScenarioResult) -> Void
                        = { _, _, _, _ in })
        -> Matrix
    {
        let columns = Mutex<[MatrixColumn?]>(Array(repeating: nil, count: entries.count))
        // The cores are shared among the drivers that run a process per scenario.
        let spawned = entries.filter { if case .command = $0.driver { true } else { false } }.count
        let jobs = max(1, options.jobs / max(1, spawned))
        // A thread per SDK, not a pool as wide as the cores: a driver that dials in mostly
        // waits, and its run must not wait for a spawned SDK's whole run to start.
        let group = DispatchGroup()
        for (index, entry) in entries.enumerated() {
            group.enter()
            Thread {
                let column = column(entry, scenarios: scenarios, jobs: jobs) { progress(entry.name, $0, $1, $2) }
                columns.withLock { $0[index] = column }
                group.leave()
            }.start()
        }
        group.wait()
        return Matrix(columns: columns.withLock { $0.compactMap { $0 } }, scenarios: scenarios, ruleBook: ruleBook)
    }

    /// One SDK's column: its handshake, then the catalogue graded with the manifest it declares
    /// (as `mockchat test` grades a run); a failed handshake or a manifest the rule book refuses
    /// makes every cell an error.
    private func column(_ entry: Entry, scenarios: [Scenario], jobs: Int,
                        progress: @Sendable (_ done: Int, _ total: Int, _ result: ScenarioResult) -> Void) -> MatrixColumn {
        var options = self.options
        options.driver = entry.driver
        options.jobs = jobs
        let started = Date()
        let results: [ScenarioResult]
        var hello: DriverCapabilities?
        do throws(ScenarioError) {
            hello = try entry.driver.handshake(timeout: options.driverTimeout)
            options.manifest = try hello?.manifest.map { declared throws(ScenarioError) in
                try Manifest.read(hello: declared, origin: "\(entry.name)'s hello")
            }
            results = CatalogueRunner(options: options).run(scenarios, progress: progress)
        } catch {
            results = scenarios.map { scenario in
                ScenarioResult(id: scenario.id, title: scenario.title, source: scenario.source, path: scenario.path,
                               verdict: .error, message: "\(entry.name): \(error)")
            }
        }
        return MatrixColumn(name: entry.name, sdkName: hello?.sdkName ?? entry.name, sdkVersion: hello?.sdkVersion ?? "?",
                            manifest: hello?.manifest, results: results, wallSeconds: Date().timeIntervalSince(started))
    }
}
