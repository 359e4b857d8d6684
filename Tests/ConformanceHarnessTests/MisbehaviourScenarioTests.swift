import ConformanceHarness
import Foundation
import Testing

/// The misbehaviour steps in scenarios: seeded and reproducible, checked by the server,
/// and able to fail.
@Suite struct MisbehaviourScenarioTests {
    static func scenario(_ steps: String) throws -> Scenario {
        try ScenarioLoader.load("""
            id: harness/misbehaviour
            title: Misbehaviour step check
            source: "000_b8b030ded7652e86.txt, Reconnection"
            steps:
            \(steps)
            """, path: "case.yaml")
    }

    @Test func seededLinksGiveByteIdenticalTraces() throws {
        for file in ["presence-under-jitter.yaml", "dropped-frames.yaml", "slow-sliced-link.yaml"] {
            let scenario = try Package.load("Fixtures/scenarios/misbehaviour/" + file)
            let first = Package.runner().run(scenario)
            let second = Package.runner().run(scenario)
            #expect(first.verdict == .passed, "\(file): \(first.message ?? "")")
            #expect(!first.trace.isEmpty && first.trace == second.trace, "\(file)")
        }
    }

    @Test func aBadFaultBodyFailsTheStepWithTheServersMessage() throws {
        let bad = try Self.loggedIn("""
              - server.fault: { fault: link, uid: alice, delayMs: 10, speed: 3 }
            """)
        let result = Package.runner().run(bad)
        #expect(result.verdict == .failed)
        #expect(result.message?.contains("unknown field 'speed' for fault link") == true, "\(result.message ?? "")")

        let expected = try Self.loggedIn("""
              - server.push: { uid: ghost, frame: hello }
                expect_status: 404
              - server.fault: { fault: link, uid: alice, delayMs: 10, jitterMs: 20 }
                expect_status: 400
              - expect: { a.status: connected }
            """)
        let passed = Package.runner().run(expected)
        #expect(passed.verdict == .passed, "\(passed.message ?? "")")
    }

    /// Steps after alice's client has logged in.
    static func loggedIn(_ steps: String) throws -> Scenario {
        try scenario("""
              - client: a
              - a.init: {}
              - a.login: alice
            \(steps)
            """)
    }

    /// A wrong expectation after a fault step fails the run, naming what it expected: the
    /// step's effect is checked, not assumed.
    @Test(arguments: [
        (name: "a push's close is 1011, not 4000", steps: """
              - server.push: { uid: alice, close: { code: 1011 } }
              - advance: 1s
              - expect: { server.closed: { uid: alice, by: server, code: 4000 } }
            """, names: "server.closed"),
        (name: "a silent session does not outlive its heartbeat", steps: """
              - server.fault: { fault: silence, uid: alice }
              - advance: 31s
              - expect: { server.online: [alice] }
            """, names: "server.online"),
    ])
    func aWrongExpectationAfterAFaultStepFails(_ name: String, steps: String, names: String) throws {
        let result = Package.runner().run(try Self.loggedIn(steps))
        #expect(result.verdict == .failed, "\(name)")
        #expect(result.message?.contains(names) == true, "\(name): \(result.message ?? "")")
    }

    @Test func aSilenceStepLetsTheServersHeartbeatEndTheSessionAndItsLiftResetsIt() throws {
        let silent = try Self.loggedIn("""
              - server.fault: { fault: silence, uid: alice }
              - advance: 29s
              - expect: { server.online: [alice] }
              - advance: 2s
              - expect: { server.online: [], server.closed: { uid: alice, code: 4002, at: 30 } }
              - server.fault: { fault: silence, uid: alice, enabled: false }
              - advance: 1s
              - expect: { server.online: [alice] }
            """)
        let result = Package.runner().run(silent)
        // After the lift the SDK's own reconnect, whose login was held, logs alice in again.
        #expect(result.verdict == .passed, "\(result.message ?? "")")
        #expect(String(decoding: result.trace, as: UTF8.self).contains("silence: close 4002 not delivered"))
    }

    @Test func pushTakesAMapping() {
        do {
            _ = try Self.scenario("  - server.push: [1]\n")
            Issue.record("loaded")
        } catch {
            #expect("\(error)".contains("server.push takes a mapping"))
        }
    }
}
