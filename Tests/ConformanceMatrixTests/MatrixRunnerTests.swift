import ConformanceHarness
import ConformanceMatrix
import Foundation
import MockChatTestSupport
import Testing

/// `mockchat matrix` end to end over the reference driver: a column is graded with the
/// manifest its driver's hello declares, as `mockchat test --sdk` grades a run.
@Suite struct MatrixRunnerTests {
    static let reference = "'\(PackagePaths.mockchat)' driver --profiles '\(PackagePaths.path("Fixtures/profiles"))'"

    /// The reference driver with `manifest` (JSON) in its hello.
    static func declaring(_ manifest: String) -> String {
        "python3 '\(PackagePaths.path("Tests/ConformanceMatrixTests/Fixtures/declaring-driver.py"))' '\(manifest)' \(reference)"
    }

    static func scenario(_ path: String) throws -> Scenario {
        let text = try #require(EmbeddedCatalogue.files.first { $0.path == path }).text
        return try ScenarioLoader.load(text, path: path)
    }

    @Test func aColumnIsGradedWithItsDriversManifest() throws {
        let scenarios = [try Self.scenario("users/list-blocked-flags.yaml"),
                         try Self.scenario("reconnection/cometchat-weak-network.yaml")]
        var options = CatalogueRunner.Options()
        options.jobs = 2
        let matrix = MatrixRunner(options: options).run(
            [.init(name: "plain", driver: .command(Self.reference)), .init(name: "declaring", driver: .command(Self.declaring(
                #"{"features":{"exclude":["users/list"]},"parameters":{"keepAliveInterval":25}}"#)))],
            scenarios: scenarios)
        let verdicts = matrix.columns.map { $0.results.map(\.verdict.rawValue) }
        // The 25 s keep-alive reaches the model and the expectations; the excluded feature is not applicable.
        #expect(verdicts == [["passed", "passed"], ["not-applicable", "passed"]], "\(matrix.columns.map { $0.results.map(\.message) })")
        #expect(matrix.columns[1].manifest?["parameters"]?["keepAliveInterval"]?.intValue == 25)
        #expect(matrix.columns.map(\.sdkName) == ["mockchat-reference", "mockchat-reference"])
    }

    @Test func aManifestTheRuleBookRefusesMakesEveryCellAnError() throws {
        let driver = Self.declaring(#"{"parameters":{"keepAliveIntervall":25}}"#)
        let matrix = MatrixRunner(options: CatalogueRunner.Options()).run(
            [.init(name: "typo", driver: .command(driver))], scenarios: [try Self.scenario("users/list-blocked-flags.yaml")])
        let cell = try #require(matrix.columns.first?.results.first)
        #expect(cell.verdict == .error)
        #expect(cell.message?.contains("keepAliveIntervall") == true, "\(cell.message ?? "")")
        let failed = matrix.isFailure
        #expect(failed)
    }
}
