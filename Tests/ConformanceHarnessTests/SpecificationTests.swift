@testable import ConformanceHarness
import ChatProtocol
import Foundation
import MockChatTestSupport
import MockChatCore
import Testing

/// The manifest is checked against the rule book, `$...` numbers follow declared values,
/// and failures are graded into verdict levels by the rules they rest on.
@Suite struct SpecificationTests {
    /// A small rule book: one documented rule, one decision, one parameter.
    static let book = try! RuleBookReader.read([
        ("features.yaml", "features:\n  connection: Connecting\n  connection/keep-alive: Heartbeats\n  users: Users\n"),
        ("rules.yaml", """
            rules:
              - id: connection.login-connects
                level: documented
                text: Login opens the socket.
                source: "000_b8b030ded7652e86.txt, Quick Reference"
                feature: connection
              - id: connection.status-connecting-in-backoff
                level: decision
                text: While a backoff waits the status is connecting.
                source: "decision: the documents do not say"
                feature: connection
              - id: users.list-page
                level: documented
                text: fetchNext returns a page.
                source: "004_376028ecd0ea17fe.txt, Get Online Users"
                feature: users
            """),
        ("rules-keep-alive.yaml", RuleBookTests.good),
    ])

    func manifestProblem(_ text: String) -> String {
        do {
            _ = try Manifest.read(text, origin: "m.yaml", ruleBook: Self.book)
            return "loaded"
        } catch {
            return error.description
        }
    }

    @Test func aManifestIsCheckedAgainstTheRuleBook() throws {
        let manifest = try Manifest.read("""
            sdk: { name: example, version: 1.2.0 }
            profile: cometchat-ios
            parameters: { keepAliveInterval: 25 }
            features: { exclude: [users] }
            waivers:
              - rule: connection.status-connecting-in-backoff
                reason: our status has no connecting while waiting
            """, origin: "m.yaml", ruleBook: Self.book)
        #expect(manifest.sdkName == "example" && manifest.sdkVersion == "1.2.0")
        #expect(manifest.parameters == ["keepAliveInterval": 25])
        #expect(manifest.implements("connection/keep-alive") && !manifest.implements("users"))
        #expect(manifest.waivers["connection.status-connecting-in-backoff"] != nil)

        #expect(manifestProblem("parameters: { keepAliveIntervall: 25 }")
                == "m.yaml:1:15: unknown parameter 'keepAliveIntervall' (did you mean 'keepAliveInterval'?)")
        #expect(manifestProblem("parameters: { keepAliveInterval: soon }")
                == "m.yaml:1:15: parameter 'keepAliveInterval': must be a number of seconds")
        #expect(manifestProblem("features:\n  exclude: [user]\n") == "m.yaml:2:13: unknown feature 'user' (did you mean 'users'?)")
        #expect(manifestProblem("waivers:\n  - rule: connection.login-connect\n    reason: x\n")
                == "m.yaml:2:5: unknown rule 'connection.login-connect' (did you mean 'connection.login-connects'?)")
        #expect(manifestProblem("waivers:\n  - rule: connection.login-connects\n    reason: x\n")
                == "m.yaml:2:5: connection.login-connects is documented: it cannot be waived, only decisions and parameters can")
        #expect(manifestProblem("sdk: { name: x }\nparameter: {}\n") == "m.yaml:2:1: unknown key 'parameter' (did you mean 'parameters'?)")
    }

    @Test func expressionsReadParameters() throws {
        let values = ParameterValues(ruleBook: .embedded, profile: "cometchat-ios")
        func value(_ text: String, _ values: ParameterValues = values) throws -> JSONValue {
            try values.substitute(.string(text), path: []) { message, _ in ScenarioError(message) }.value
        }
        #expect(try value("$keepAliveInterval") == 10)
        #expect(try value("$keepAliveInterval + $pongTimeout + $backoff(1)") == .double(20.05))
        #expect(try value("$backoffTotal(13) - 1ms") == .double(319.799))
        #expect(try value("$backgroundCloseCode") == 1001)
        let list = try values.substitute(["at": [0, "$backoffTimes(10, 3)"]], path: []) { message, _ in ScenarioError(message) }
        #expect(list.value == ["at": [0, .double(10.05), .double(10.3), .double(10.8)]])
        #expect(list.parameters == ["reconnectBackoff"])
        let declared = ParameterValues(ruleBook: .embedded, profile: "cometchat-ios", declared: ["keepAliveInterval": 25])
        #expect(try value("$keepAliveInterval * 2", declared) == 50)
        #expect(throws: ScenarioError.self) { try value("$keepAliveIntervall") }
        #expect(throws: ScenarioError.self) { try value("$keepAliveInterval +") }
    }

    /// A retry number is checked before it becomes an integer: `$backoffTotal(1e40)`
    /// trapped (Double to Int), `$backoffTimes(0, 300000000)` ran for minutes.
    @Test func aRetryNumberOutOfRangeIsAnErrorNamingTheExpression() throws {
        let values = ParameterValues(ruleBook: .embedded, profile: "cometchat-ios")
        func value(_ text: String) throws -> JSONValue {
            try values.substitute(.string(text), path: []) { message, _ in ScenarioError(message) }.value
        }
        func problem(_ text: String) -> String? {
            do {
                _ = try values.substitute(.string(text), path: []) { message, _ in ScenarioError(message) }
                return nil
            } catch {
                return error.message
            }
        }
        let huge = String(repeating: "9", count: 40)
        #expect(problem("$backoffTotal(\(huge))")?
            .contains("n in $backoffTotal(\(huge)) (backoffTotal(n)) must be a number from 0 to 10000 retries, not 1e+40") == true)
        #expect(problem("$backoff(0 - \(huge))")?.contains("(backoff(n)) must be a number from 0 to 10000 retries, not -1e+40") == true)
        #expect(problem("$backoffTotal(10000.5 + 0.1)")?.contains("not 10000.6") == true)
        let longest = 10_000
        let started = Stopwatch()
        func list(_ count: Int) throws -> JSONValue {
            try values.substitute(["at": [.string("$backoffTimes(0, \(count))")]], path: []) { message, _ in ScenarioError(message) }.value
        }
        #expect(throws: ScenarioError.self) { try list(300_000_000) }
        #expect(try list(longest)["at"]?.arrayValue?.count == longest)
        #expect(started.elapsedSeconds < 5, "the longest list is built in linear time")
        #expect(try value("$backoffTotal(10000)") == list(longest)["at"]?.arrayValue?.last)
    }

    @Test func anUnknownParameterInAScenarioIsALoadError() {
        let text = "id: a/b\ntitle: t\nsource: s\nsteps:\n  - client: a\n  - advance: $keepAliveIntervl\n"
        do {
            _ = try ScenarioLoader.load(text, path: "s.yaml")
            Issue.record("loaded")
        } catch {
            #expect(error.description.hasPrefix("s.yaml:6:5: unknown parameter 'keepAliveIntervl' (did you mean 'keepAliveInterval'?)"))
        }
    }

    /// A scenario of the small book whose step 2 names no rule, step 3 a decision and step 4 reads a parameter.
    static let scenario = try! ScenarioLoader.load("""
        id: harness/verdicts
        title: Verdicts
        source: s
        rules: [connection.login-connects]
        steps:
          - client: a
          - expect: { a.status: connected }
          - expect: { a.status: connecting, rule: connection.status-connecting-in-backoff }
          - advance: $keepAliveInterval
          - expect: { a.status: connected, rules: [connection.login-connects, connection.status-connecting-in-backoff] }
        """, ruleBook: book)

    func verdict(failingAt step: Int, _ manifest: String?) throws -> ScenarioResult {
        var result = ScenarioResult(id: "harness/verdicts", title: "Verdicts", source: "s", path: "p", verdict: .failed)
        result.failedStep = step
        let declared = try manifest.map { text throws(ScenarioError) in try Manifest.read(text, origin: "m.yaml", ruleBook: Self.book) }
        return Verdicts.classify(result, scenario: Self.scenario, manifest: declared, book: Self.book)
    }

    @Test func failuresAreGradedByTheirRules() throws {
        let documented = try verdict(failingAt: 2, nil)
        #expect(documented.verdict == .failed)
        #expect(documented.rules == ["connection.login-connects (documented): Login opens the socket."])
        let decision = try verdict(failingAt: 3, nil)
        #expect(decision.verdict == .deviation)
        #expect(decision.rules == ["connection.status-connecting-in-backoff (decision): While a backoff waits the status is connecting."])
        #expect(try verdict(failingAt: 4, nil).verdict == .deviation)
        let waived = try verdict(failingAt: 3, "waivers: [{rule: connection.status-connecting-in-backoff, reason: ours differs}]")
        #expect(waived.verdict == .waived)
        #expect(waived.rules.first?.hasSuffix("waived: ours differs") == true)
        let declared = try verdict(failingAt: 4, "parameters: { keepAliveInterval: 25 }")
        #expect(declared.verdict == .failed)
        #expect(declared.rules.first?.contains("declared keepAliveInterval: 25") == true)
        #expect(try verdict(failingAt: 2, "waivers: [{rule: connection.status-connecting-in-backoff, reason: x}]").verdict == .failed)
        let mixed = try verdict(failingAt: 5, "waivers: [{rule: connection.status-connecting-in-backoff, reason: x}]")
        #expect(mixed.verdict == .failed)
        #expect(mixed.rules.count == 2)
    }

    @Test func aScenarioNeedingAnUndeclaredFeatureDoesNotApply() throws {
        let excluded = try Manifest.read("features: { exclude: [connection/keep-alive] }", origin: "m.yaml", ruleBook: Self.book)
        let result = try #require(Verdicts.notApplicable(Self.scenario, manifest: excluded, book: Self.book))
        #expect(result.verdict == .notApplicable)
        #expect(result.rules == ["connection.keep-alive-interval (parameter): The SDK pings every keepAliveInterval seconds."])
        let included = try Manifest.read("features: { include: [connection] }", origin: "m.yaml", ruleBook: Self.book)
        #expect(Verdicts.notApplicable(Self.scenario, manifest: included, book: Self.book) == nil)
        let other = try Manifest.read("profile: nexconn-ios", origin: "m.yaml", ruleBook: Self.book)
        #expect(Verdicts.notApplicable(Self.scenario, manifest: other, book: Self.book)?.verdict == .notApplicable)
    }

    /// The reference model run with a manifest takes its values: the heartbeat-timeout scenario,
    /// written with `$keepAliveInterval`, passes with a 25 s keep-alive; written with the old
    /// literal numbers the same run fails.
    @Test func declaredValuesReachTheModelAndTheExpectations() throws {
        var options = CatalogueRunner.Options()
        options.jobs = 1
        options.manifest = try Manifest.read("parameters: { keepAliveInterval: 25 }", origin: "m.yaml")
        let written = try #require(EmbeddedCatalogue.files.first { $0.path == "reconnection/cometchat-weak-network.yaml" }).text
        let parameterized = try ScenarioLoader.load(written, path: "weak.yaml")
        #expect(parameterized.parameters.contains("keepAliveInterval"))
        let literal = try ScenarioLoader.load(Self.literalWeakNetwork, path: "weak-literal.yaml")
        let results = CatalogueRunner(options: options).run([parameterized, literal])
        #expect(results[0].verdict == .passed, "\(results[0].message ?? "")")
        #expect(results[1].verdict == .failed)
        #expect(results[1].message?.contains("step 6") == true, "\(results[1].message ?? "")")
        options.manifest = nil
        #expect(CatalogueRunner(options: options).run([parameterized, literal]).map(\.verdict) == [.passed, .passed])
    }

    /// reconnection/cometchat/weak-network-heartbeat-timeout as it was written before parameters.
    static let literalWeakNetwork = """
        id: reconnection/cometchat/weak-network-heartbeat-timeout-literal
        title: The weak-network scenario with the default values written as numbers
        source: "000_b8b030ded7652e86.txt, Reconnection"
        steps:
          - client: a
          - a.init: {}
          - a.login: alice
          - a.network: weak
          - advance: 20s
          - expect:
              a.status: connecting
              server.received: [ { from: alice, op: ping, at: 10 } ]
              a.connectAttempts: { at: [0], exact: true }
          - advance: 50ms
          - expect: { a.connectAttempts: { at: [0, 20.05], exact: true } }
          - a.network: up
          - advance: 30s
          - expect: { a.status: connected, server.online: [alice] }
        """
}
