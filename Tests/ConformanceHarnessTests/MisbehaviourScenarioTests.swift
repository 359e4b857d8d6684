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
        let bad = try Self.scenario("""
              - client: a
              - a.init: {}
              - a.login: alice
              - server.fault: { fault: link, uid: alice, delayMs: 10, speed: 3 }
            """)
        let result = Package.runner().run(bad)
        #expect(result.verdict == .failed)
        #expect(result.message?.contains("unknown field 'speed' for fault link") == true, "\(result.message ?? "")")

        let expected = try Self.scenario("""
              - client: a
              - a.init: {}
              - a.login: alice
              - server.push: { uid: ghost, frame: hello }
                expect_status: 404
              - server.fault: { fault: link, uid: alice, delayMs: 10, jitterMs: 20 }
                expect_status: 400
              - expect: { a.status: connected }
            """)
        let passed = Package.runner().run(expected)
        #expect(passed.verdict == .passed, "\(passed.message ?? "")")
    }

    @Test func aWrongExpectationAboutAPushFails() throws {
        let wrong = try Self.scenario("""
              - client: a
              - a.init: {}
              - a.login: alice
              - server.push: { uid: alice, close: { code: 1011 } }
              - advance: 1s
              - expect: { server.closed: { uid: alice, by: server, code: 4000 } }
            """)
        let result = Package.runner().run(wrong)
        #expect(result.verdict == .failed)
        #expect(result.message?.contains("server.closed") == true)
    }

    @Test func aSilenceStepLetsTheServersHeartbeatEndTheSessionAndItsLiftResetsIt() throws {
        let silent = try Self.scenario("""
              - client: a
              - a.init: {}
              - a.login: alice
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
        // The same steps with a wrong expectation fail: the session outlives its heartbeat only without the fault.
        let wrong = try Self.scenario("""
              - client: a
              - a.init: {}
              - a.login: alice
              - server.fault: { fault: silence, uid: alice }
              - advance: 31s
              - expect: { server.online: [alice] }
            """)
        #expect(Package.runner().run(wrong).verdict == .failed)
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
