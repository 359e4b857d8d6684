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

/// One row: a scenario and the rule it checks, with a cell per column.
public struct MatrixRow: Sendable {
    public var id: String
    public var group: String
    public var title: String
    public var source: String
    public var cells: [MatrixCell]

    /// Whether the SDKs disagree on this row.
    public var differs: Bool { Set(cells.map(\.verdict)).count > 1 }
}

/// The rows × SDKs table of `mockchat matrix`.
public struct Matrix: Sendable {
    public var columns: [MatrixColumn]
    public var rows: [MatrixRow]

    /// Rows in catalogue order (the first column's, then any id only a later one ran).
    public init(columns: [MatrixColumn]) {
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
    }

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

    public init(options: CatalogueRunner.Options) {
        self.options = options
    }

    /// Runs `scenarios` through every entry; `progress` gets each SDK's name with its results.
    public func run(_ entries: [Entry], scenarios: [Scenario],
                    progress: @Sendable (_ sdk: String, _ done: Int, _ total: Int, _ result: ScenarioResult) -> Void = { _, _, _, _ in })
        -> Matrix
    {
        let columns = Mutex<[MatrixColumn?]>(Array(repeating: nil, count: entries.count))
        // The cores are shared among the drivers that run a process per scenario.
        let spawned = entries.filter { if case .command = $0.driver { true } else { false } }.count
        let jobs = max(1, options.jobs / max(1, spawned))
        DispatchQueue.concurrentPerform(iterations: entries.count) { index in
            let entry = entries[index]
            var options = self.options
            options.driver = entry.driver
            options.jobs = jobs
            let started = Date()
            let results = CatalogueRunner(options: options).run(scenarios) { done, total, result in
                progress(entry.name, done, total, result)
            }
            let hello = Self.hello(of: entry.driver, timeout: options.driverTimeout)
            let column = MatrixColumn(
                name: entry.name, sdkName: hello?["sdk"]?["name"]?.stringValue ?? entry.name,
                sdkVersion: hello?["sdk"]?["version"]?.stringValue ?? "?", manifest: hello?["manifest"],
                results: results, wallSeconds: Date().timeIntervalSince(started))
            columns.withLock { $0[index] = column }
        }
        return Matrix(columns: columns.withLock { $0.compactMap { $0 } })
    }

    /// What the driver said in its hello: a connected driver's last one, or a fresh handshake.
    private static func hello(of driver: CatalogueRunner.DriverSource, timeout: Double) -> JSONValue? {
        switch driver {
        case .listener(let listener): listener.hello
        case .command: try? driver.handshake(timeout: timeout).hello
        }
    }
}
