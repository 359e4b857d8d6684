@testable import ConformanceHarness
import Foundation
import Testing

/// Load-time checks: every problem names file:line:column and, for a misspelt name,
/// the name that was probably meant.
@Suite struct ScenarioLoaderTests {
    static let head = """
        id: harness/loader
        title: Loader check
        source: "000_b8b030ded7652e86.txt, Auto Mode"

        """

    func problem(_ body: String, file: String = "case.yaml") -> String {
        do {
            _ = try ScenarioLoader.load(Self.head + body, path: file)
            return "loaded"
        } catch {
            return error.description
        }
    }

    @Test func unknownTopLevelKeyIsNamedWithASuggestion() {
        #expect(problem("timout: 3\nsteps:\n  - client: a\n")
                == "case.yaml:4:1: unknown top-level key 'timout' (known: id, title, source, profile, app, seed, skip, rules, steps)")
        #expect(problem("step:\n  - client: a\n") == "case.yaml:4:1: unknown top-level key 'step' (did you mean 'steps'?)")
    }

    @Test func sourceIsRequired() {
        let text = "id: a/b\ntitle: t\nsteps:\n  - client: a\n"
        #expect(throws: ScenarioError.self) { try ScenarioLoader.load(text) }
        do { _ = try ScenarioLoader.load(text) } catch { #expect(error.message.contains("'source' is required")) }
    }

    @Test func wrongTypesAreErrors() {
        #expect(problem("seed: many\nsteps:\n  - client: a\n") == "case.yaml:4:1: 'seed' must be an integer")
        #expect(problem("steps:\n  - client: a\n  - advance: soon\n").hasPrefix("case.yaml:6:5: cannot read duration 'soon'"))
        // Found by `mockchat fuzz --mode inputs` (seed 1): these crashed the loader (Double to Int64).
        for value in ["1e308", ".inf", "1e999", "1e300s", "-.inf"] {
            #expect(problem("steps:\n  - client: a\n  - advance: \(value)\n").contains("a duration must be a number from 0 to 31622400 seconds"),
                    "advance: \(value)")
        }
        #expect(problem("steps:\n  - client: a\n  - a.network: sideways\n") == "case.yaml:6:5: network: network takes up, down or weak")
    }

    /// Device events check their whole argument and say what they take.
    @Test func deviceEventsRefuseBadArguments() {
        func step(_ text: String) -> String { problem("steps:\n  - client: a\n  - \(text)\n") }
        #expect(step("a.dns: {fail: 2}") == "loaded")
        #expect(step("a.dns: {fail: true}") == "loaded")
        #expect(step("a.dns: {fail: 2, error: temporary}") == "loaded")
        let dnsShape = "dns takes {fail: N} (the next N attempts), {fail: true} (until cleared) or {fail: false}, and an optional error: notFound, temporary"
        #expect(step("a.dns: fail").hasSuffix(dnsShape))
        #expect(step("a.dns: {fail: 2, for: 3}").hasSuffix(dnsShape))
        #expect(step("a.dns: {error: temporary}").hasSuffix(dnsShape))
        #expect(step("a.dns: {fail: 2, error: again}").hasSuffix("dns error is one of notFound, temporary, not \"again\""))
        #expect(step("a.dns: {fail: 0}").hasSuffix("dns fail is a number of attempts from 1 to 1000000, true or false"))
        #expect(step("a.sleep: 90s") == "loaded")
        #expect(step("a.sleep: 0").hasSuffix("sleep is a duration from 1ms to 24h"))
        #expect(step("a.sleep: 25h").hasSuffix("sleep is a duration from 1ms to 24h"))
        #expect(step("a.sleep: soon").hasSuffix("cannot read duration 'soon'"))
        #expect(step("a.throttle: 60s") == "loaded")
        #expect(step("a.throttle: off") == "loaded")
        #expect(step("a.throttle: 2h").hasSuffix("throttle is a period from 1ms to 1h, or off"))
        #expect(step("a.networkChange: {}") == "loaded")
        #expect(step("a.networkChange: wifi").hasSuffix("networkChange takes no arguments: write {}"))
    }

    /// A subscription is read as the wire reads it: a role that is not a string is refused,
    /// not dropped.
    @Test func presenceRolesMustBeStrings() {
        #expect(problem("steps:\n  - client: a\n  - a.init: {presence: [admin]}\n") == "loaded")
        #expect(problem("steps:\n  - client: a\n  - a.init: {presence: [admin, 1]}\n")
                .hasSuffix("presence is all, friends, none or a list of role names"))
    }

    @Test func shorthandsThatTakeAMappingSaySo() {
        #expect(problem("steps:\n  - server.app: 20\n") == "case.yaml:5:5: server.app takes a mapping of app settings")
        #expect(problem("steps:\n  - server.push: [1]\n")
                == "case.yaml:5:5: server.push takes a mapping: a target and one of event, frame, bytes, close")
        #expect(problem("steps:\n  - server.app: {heartbeatTimeout: 20}\n") == "loaded")
    }

    @Test func unknownStepsMethodsAndPropertiesSuggestTheKnownName() {
        #expect(problem("steps:\n  - client: a\n  - expct: { a.status: connected }\n")
                == "case.yaml:6:5: unknown step 'expct' (did you mean 'expect'?)")
        #expect(problem("steps:\n  - client: a\n  - expect: { a.stauts: connected }\n")
                == "case.yaml:6:15: unknown client property 'stauts' (did you mean 'status'?)")
        #expect(problem("steps:\n  - client: alice\n  - alcie.login: alice\n")
                == "case.yaml:6:5: no client or wire named 'alcie' (did you mean 'alice'?)")
        #expect(problem("steps:\n  - server.falt: {}\n") == "case.yaml:5:5: unknown server step 'falt' (did you mean 'fault'?)")
        #expect(problem("steps:\n  - wire: w\n  - w.snd: {}\n") == "case.yaml:6:5: unknown wire method 'snd' (did you mean 'send'?)")
    }

    /// Each time of `connectAttempts` is read when the file loads, as a pattern's `at` is:
    /// an expression that does not start with `$` is named, not compared as a text.
    @Test func connectAttemptTimesAreDurations() {
        func check(_ value: String) -> String { problem("steps:\n  - client: a\n  - expect:\n      a.connectAttempts: \(value)\n") }
        #expect(check("{ at: [0, \"$pongTimeout + 4\", 20.05], exact: true, after: 1s, tolerance: 5ms }") == "loaded")
        #expect(check("[0, 0.05, 300ms]") == "loaded")
        #expect(check("{ at: [0, \"4 + $pongTimeout\"] }") == "case.yaml:7:36: cannot read duration '4 + $pongTimeout'")
        #expect(check("[0, soon]") == "case.yaml:7:30: cannot read duration 'soon'")
        #expect(check("{ at: [0], after: later }") == "case.yaml:7:37: cannot read duration 'later'")
        #expect(check("{ at: [0], exact: 1 }") == "case.yaml:7:37: 'exact' takes true or false")
    }

    @Test func patternFieldsAndMatchersAreChecked() {
        #expect(problem("steps:\n  - client: a\n  - expect:\n      server.closed: { bye: server }\n")
                == "case.yaml:7:24: unknown field 'bye' (did you mean 'by'?)")
        #expect(problem("steps:\n  - client: a\n  - expect:\n      a.result:\n        users[0].uid: { gte: 1 }\n")
                == "case.yaml:8:25: unknown matcher 'gte' (did you mean 'ge'?)")
        #expect(problem("steps:\n  - client: a\n  - expect:\n      a.result:\n        usrs[0].uid: bob\n")
                == "case.yaml:8:9: unknown field 'usrs[0].uid' (did you mean 'users'?)")
        #expect(problem("steps:\n  - client: a\n  - expect:\n      a.result: { description: { matches: \"(\" } }\n")
                .contains("not a valid regular expression"))
        #expect(problem("steps:\n  - client: a\n  - expect:\n      server.closed: { by: nobody }\n")
                .contains("by is server, client or drop"))
    }

    @Test func modifiersMustSitWithTheirAction() {
        #expect(problem("steps:\n  - client: a\n  - advance: 1s\n    expect_error: ERR_X\n")
                == "case.yaml:7:5: 'expect_error' goes with a client call step")
    }

    @Test func yamlSyntaxErrorsHaveALocation() {
        let text = problem("steps:\n  - client: a\n  - expect: { a.status: connected\n")
        #expect(text.hasPrefix("case.yaml:"))
        #expect(text.contains("not valid YAML"))
    }

    @Test func theWholeCatalogueLoadsUnderTheChecks() throws {
        let scenarios = try ScenarioLoader.loadAll(paths: [Package.path("Fixtures/scenarios")])
        #expect(scenarios.count >= 130)
    }
}

/// `rules:` at the top and `rule:`/`rules:` inside an expect step name rule-book ids.
@Suite struct ScenarioRuleTests {
    let text = """
        id: harness/rules
        title: Rules
        source: "000_b8b030ded7652e86.txt, Auto Mode"
        rules: [connection.keep-alive-interval]
        steps:
          - client: a
          - expect: { a.status: disconnected, rule: connection.pong-timeout }
          - expect: { a.status: disconnected, rules: [connection.pong-timeout, connection.keep-alive-interval] }
          - a.ping: {}
            expect_error: ERR_WEBSOCKET_ERROR
            rule: connection.pong-timeout
        """

    /// Two rules, so that the test does not depend on the catalogue's rule book.
    static let book = try! RuleBookReader.read([RuleBookTests.features, ("connection.yaml", RuleBookTests.good + """

          - id: connection.pong-timeout
            level: decision
            text: A ping left unanswered for 10 s ends the connection.
            source: "decision: no deadline is documented"
            feature: connection/keep-alive
        """)])

    @Test func ruleIdsAreRead() throws {
        let scenario = try ScenarioLoader.load(text, ruleBook: Self.book)
        #expect(scenario.rules == ["connection.keep-alive-interval"])
        #expect(scenario.steps[1].rules == ["connection.pong-timeout"])
        #expect(scenario.steps[2].rules == ["connection.pong-timeout", "connection.keep-alive-interval"])
        #expect(scenario.steps[3].rules == ["connection.pong-timeout"])
        guard case .expect(let expectations, _) = scenario.steps[1].action else { Issue.record("not an expect step"); return }
        #expect(expectations.map(\.text) == ["a.status: \"disconnected\""])
    }

    @Test func anUnknownRuleIsALoadError() {
        for (wrong, place) in [("rules: [connection.keep-alive-intervl]", "s.yaml:4:9"),
                               ("rule: connection.pong-timeot }", "s.yaml:7:39")] {
            let broken = text.replacingOccurrences(of: wrong.hasPrefix("rules") ? "rules: [connection.keep-alive-interval]"
                                                       : "rule: connection.pong-timeout }", with: wrong)
            do {
                _ = try ScenarioLoader.load(broken, path: "s.yaml", ruleBook: Self.book)
                Issue.record("loaded")
            } catch {
                #expect(error.description.hasPrefix("\(place): unknown rule"), "\(error)")
                #expect(error.description.contains("did you mean"))
            }
        }
    }
}
