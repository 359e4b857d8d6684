import ConformanceHarness
import Foundation
import MockChatTestSupport
@testable import ProtocolFuzzer
import Testing

/// `fuzz --sdk` with a manifest: the reference model runs with the declared values, as the
/// driver does, so the reference driver given Fixtures/manifests/other-values.yaml agrees
/// with itself.
@Suite(.serialized) struct SDKFuzzerManifestTests {
    static let driver = "'\(PackagePaths.mockchat)' driver --profiles '\(PackagePaths.root.path)/Fixtures/profiles'"
    static let manifest = try! Manifest.load(path: PackagePaths.path("Fixtures/manifests/other-values.yaml"))

    func options(manifest: Manifest?) -> SDKFuzzer.Options {
        var options = SDKFuzzer.Options()
        options.seed = 3
        options.steps = 200
        options.historyLength = 20
        options.outputFolder = nil
        options.jobs = 2
        options.stopAtFirst = true
        options.shrinkBudgetSeconds = 30
        options.runner.driver = .command(Self.driver)
        options.runner.driverTimeout = 15
        options.runner.manifest = manifest
        return options
    }

    /// The model's records of a history with a server drop differ with the declared backoff.
    @Test func theDeclaredValuesReachTheReferenceRun() throws {
        let declared = try SDKFuzzer(options: options(manifest: Self.manifest))
        let plain = try SDKFuzzer(options: options(manifest: nil))
        let generator = AppHistoryGenerator(commands: declared.capabilities.commands, profiles: ["cometchat-ios"])
        let history = try #require((1...40).lazy.map { generator.generate(seed: UInt64($0), length: 30) }
            .first { $0.actions.contains { $0.kind == "server drop" } })
        let withValues = try #require(declared.recordReference(history)).1
        let withDefaults = try #require(plain.recordReference(history)).1
        #expect(withValues != withDefaults)
    }

    @Test func theReferenceDriverWithTheManifestAgreesWithItself() throws {
        let report = try SDKFuzzer(options: options(manifest: Self.manifest)).run()
        #expect(report.steps == 200)
        #expect(report.divergences == 0, "\(report.findings.map(\.message))")
        #expect(report.badDriverRuns == 0 && report.crashes == 0, "\(report.crashMessages)")
    }
}
