@testable import ConformanceHarness
import ChatProtocol
import Foundation
import MockChatTestSupport
import ReferenceClient
import Testing

/// No scenario hard-codes a value an SDK may choose: with Fixtures/manifests/other-values.yaml,
/// which gives every parameter the SDK owns a value of its own, the reference model takes
/// those values and the whole catalogue passes; a scenario written with MockChat's numbers
/// fails under the same manifest.
@Suite struct ManifestValuesTests {
    static let manifest = try! Manifest.load(path: PackagePaths.path("Fixtures/manifests/other-values.yaml"))

    /// Every rule-book parameter that is a field of a profile (a value of the SDK's) is
    /// declared, each with a value that is not MockChat's default.
    @Test func theManifestDeclaresEveryValueOfTheSDK() throws {
        let book = RuleBook.embedded
        let sdkOwned = Set(Profile.sourcedFields).intersection(book.parameterNames)
        #expect(sdkOwned.subtracting(Self.manifest.parameters.keys).isEmpty,
                "not declared: \(sdkOwned.subtracting(Self.manifest.parameters.keys).sorted())")
        for (name, value) in Self.manifest.parameters {
            for profile in ["cometchat-ios", "nexconn-ios"] {
                let parameter = try #require(book.parameterRule(name)?.parameter)
                #expect(parameter.defaultValue(profile: profile) != value, "\(name) keeps the default of \(profile)")
            }
        }
    }

    @Test func theCataloguePassesWithTheDeclaredValues() throws {
        var options = CatalogueRunner.Options()
        options.manifest = Self.manifest
        let scenarios = try EmbeddedCatalogue.files.map { file throws(ScenarioError) in try ScenarioLoader.load(file.text, path: file.path) }
        let results = CatalogueRunner(options: options).run(scenarios)
        let notPassed = results.filter { $0.verdict != .passed }
        #expect(notPassed.isEmpty, "\(notPassed.map { "\($0.verdict) \($0.id): \($0.message ?? "")" }.joined(separator: "\n"))")
    }

    /// reconnection/cometchat/auto-connection-drop with the default backoff written as numbers.
    @Test func aScenarioWithMockChatsNumbersFailsUnderTheManifest() throws {
        let literal = try ScenarioLoader.load("""
            id: reconnection/cometchat/auto-connection-drop-literal
            title: The first reconnection 0.05 s after a drop, written as a number
            source: "000_b8b030ded7652e86.txt, Reconnection"
            rules: [reconnection.backoff-schedule]
            steps:
              - client: a
              - a.init: {}
              - a.login: alice
              - advance: 5s
              - server.fault: { fault: drop, uid: alice }
              - advance: 50ms
              - expect: { a.status: connected, a.connectAttempts: { at: [0, 5.05], exact: true }, rule: reconnection.backoff-schedule }
            """, path: "literal.yaml")
        var options = CatalogueRunner.Options()
        options.jobs = 1
        #expect(CatalogueRunner(options: options).run([literal]).map(\.verdict) == [.passed])
        options.manifest = Self.manifest
        let result = try #require(CatalogueRunner(options: options).run([literal]).first)
        #expect(result.verdict == .failed)
        #expect(result.rules.contains { $0.contains("declared reconnectBackoff") }, "\(result.rules)")
    }
}
