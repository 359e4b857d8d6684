import ConformanceHarness
import Foundation
import Testing

/// Assertion semantics against real runs: each shape holds on the run and fails on a
/// wrong expectation with a message that says what was found.
@Suite struct AssertionTests {
    func run(_ steps: String, profile: String = "cometchat-ios") throws -> ScenarioResult {
        let text = """
            id: harness/assertion
            title: Assertion check
            source: "000_b8b030ded7652e86.txt, Auto Mode"
            profile: \(profile)
            steps:
            \(steps)
            """
        return Package.runner().run(try ScenarioLoader.load(text))
    }

    /// Bob on two mobile devices: the second login kicks the first (one server close).
    let kick = """
          - client: a
            device: bob-phone-a
          - a.init: {}
          - a.login: bob
          - client: b
            device: bob-phone-b
          - b.init: {}
          - b.login: bob
        """

    @Test func serverCloseCountsOncePerConnectionWithWhoClosed() throws {
        let holds = try run(kick + """

              - expect:
                  server.closed: { by: server, code: 4001, uid: bob, device: bob-phone-a, count: 1 }
            """)
        #expect(holds.verdict == .passed, "\(holds.message ?? "")")
        let wrong = try run(kick + """

              - expect:
                  server.closed: { by: client, code: 4001, count: 1 }
            """)
        #expect(wrong.verdict == .failed)
        #expect(wrong.message?.contains("0 matching connection ends (want 1)") == true, "\(wrong.message ?? "")")
        #expect(wrong.message?.contains("\"by\":\"server\"") == true)
    }

    @Test func clientCloseAndDropAreTold() throws {
        let steps = """
              - client: a
              - a.init: {}
              - a.login: alice
              - a.disconnect: {}
              - client: b
              - b.init: {}
              - b.login: bob
              - server.fault: { fault: drop, uid: bob }
            """
        let holds = try run(steps + """

              - expect:
                  server.closed: [ { uid: alice, by: client, code: 1000 }, { uid: bob, by: drop, code: null, count: 1 } ]
            """)
        #expect(holds.verdict == .passed, "\(holds.message ?? "")")
        let wrong = try run(steps + """

              - expect:
                  server.closed: { uid: bob, by: drop, code: 1006 }
            """)
        #expect(wrong.verdict == .failed)
    }

    @Test func serverReceivedCreditsTheLoginFrameToItsUser() throws {
        let steps = """
              - client: b
              - b.init: {}
              - b.login: bob
            """
        #expect(try run(steps + "\n  - expect: { server.received: { from: bob, op: login, count: 1 } }").verdict == .passed)
        #expect(try run(steps + "\n  - expect: { server.received: { from: alice, op: login } }").verdict == .failed)
    }

    @Test func aRefusedLoginsCloseIsCreditedToTheUidItNamed() throws {
        let steps = """
              - client: a
                device: ghost-phone
              - a.init: {}
              - a.login: nobody
                expect_error: ERR_UID_NOT_FOUND
            """
        let holds = try run(steps + "\n  - expect: { server.closed: { uid: nobody, device: ghost-phone, by: server, count: 1 } }")
        #expect(holds.verdict == .passed, "\(holds.message ?? "")")
        #expect(try run(steps + "\n  - expect: { server.closed: { uid: nobody, by: client } }").verdict == .failed)
    }

    @Test func resultPathsIndexTheUsersOfAPage() throws {
        let steps = """
              - client: a
              - a.init: {}
              - a.login: alice
              - a.fetchNext: { limit: 2 }
            """
        let holds = try run(steps + """

              - expect:
                  a.result:
                    users[0].uid: alice
                    users[*].uid: [alice, bob]
                    users[1].metadata.team: mobile
                    uids: { contains: bob }
            """)
        #expect(holds.verdict == .passed, "\(holds.message ?? "")")
        let wrong = try run(steps + """

              - expect:
                  a.result:
                    users[0].uid: bob
            """)
        #expect(wrong.verdict == .failed)
        #expect(wrong.message?.contains("users[0].uid = \"alice\"") == true, "\(wrong.message ?? "")")
    }

    @Test func receivedReadsTheFrameAsSent() throws {
        // bob's link is null in the frame: present, not absent.
        let steps = """
              - client: a
              - a.init: { presence: all }
              - a.addUserListener: l
              - a.login: alice
              - client: b
              - b.init: {}
              - b.login: bob
            """
        let holds = try run(steps + """

              - expect:
                  a.received: { event: online, uid: bob, link: null, metadata.team: mobile, metadata.floor: { absent: true }, statusValue: 0 }
            """)
        #expect(holds.verdict == .passed, "\(holds.message ?? "")")
        let wrong = try run(steps + """

              - expect:
                  a.received: { event: online, uid: bob, link: { absent: true } }
            """)
        #expect(wrong.verdict == .failed)
    }

    @Test func everyFailingAssertionOfAStepIsReported() throws {
        let result = try run("""
              - client: a
              - a.init: {}
              - a.login: alice
              - expect:
                  a.status: disconnected
                  a.loggedInUser: alice
                  server.online: []
            """)
        #expect(result.verdict == .failed)
        let message = try #require(result.message)
        #expect(message.contains("2 of 3 assertions failed"))
        #expect(message.contains("expected: a.status"))
        #expect(message.contains("expected: server.online"))
    }

    @Test func failureContextLeavesOutKeepAlivesAndShowsClientLogs() throws {
        let result = try run("""
              - client: a
              - a.init: {}
              - a.login: alice
              - advance: 1h
              - expect: { a.status: disconnected }
            """)
        #expect(result.verdict == .failed)
        #expect(!result.traceTail.isEmpty)
        #expect(!result.traceTail.contains { $0.contains("\"ping\"") || $0.contains("\"pong\"") })
        // The login is still in view: an hour of pings did not push it out.
        #expect(result.traceTail.contains { $0.contains("\"login\"") })
        let log = try #require(result.clientLogs.first { $0.client == "a" })
        #expect(!log.lines.isEmpty)
        #expect(ConsoleReport.render([result], wallSeconds: 0).contains("a recent log:"))
    }

    /// A wire client's ping before logging in (refused) and its login: two frames back.
    static let pingThenLogin = """
          - wire: w
          - w.send: {id: 1, op: ping}
          - w.send: {id: 2, op: login, uid: alice, authKey: mockchat-dev-key}
        """

    @Test func aWireFrameByNumberNamesEachFieldThatDiffers() throws {
        let steps = Self.pingThenLogin
        let holds = try run(steps + """

              - expect:
                  w.frames: [{nth: 1, id: 1, error.errorCode: ERR_NOT_LOGGED_IN}, {nth: 2, id: 2, result.user.uid: alice}]
            """)
        #expect(holds.verdict == .passed, "\(holds.message ?? "")")
        let wrong = try run(steps + """

              - expect:
                  w.frames: {nth: 2, id: 2, error.errorCode: ERR_AUTH_FAILED}
            """)
        #expect(wrong.message?.contains("frame 2 of w differs: error.errorCode = absent, expected \"ERR_AUTH_FAILED\"") == true,
                "\(wrong.message ?? "")")
        #expect(wrong.message?.contains("the frame: {\"id\":2,\"result\"") == true)
        let missing = try run(steps + """

              - expect:
                  w.frames: {nth: 3, event: user.online}
            """)
        #expect(missing.message?.contains("frame 3 never arrived: w received 2 frames") == true, "\(missing.message ?? "")")
        #expect(throws: ScenarioError.self) { try run("  - wire: w\n  - expect:\n      w.frames: {nth: 0}") }
    }

    @Test func aWireFrameByNumberWithACountSaysWhetherThatFrameMatches() throws {
        let steps = Self.pingThenLogin
        // Frame 1 is the refused ping, frame 2 the login reply, frame 3 never comes.
        let holds = try run(steps + """

              - expect:
                  w.frames: [{nth: 1, error.errorCode: ERR_AUTH_FAILED, count: 0}, {nth: 2, id: 2, count: 1},
                             {nth: 3, count: 0}]
            """)
        #expect(holds.verdict == .passed, "\(holds.message ?? "")")
        let wrong = try run(steps + """

              - expect:
                  w.frames: {nth: 1, error.errorCode: ERR_NOT_LOGGED_IN, count: 0}
            """)
        #expect(wrong.verdict == .failed)
        #expect(wrong.message?.contains("1 matching frames (want 0) among frame 1 of w: {\"id\":1") == true,
                "\(wrong.message ?? "")")
        let missing = try run(steps + """

              - expect:
                  w.frames: {nth: 3, count: 1}
            """)
        #expect(missing.message?.contains("0 matching frames (want 1) among frame 3 of w: never arrived") == true,
                "\(missing.message ?? "")")
    }

    @Test func connectionListenersListEachListenersCallsById() throws {
        let steps = """
              - client: a
              - a.init: {}
              - a.addConnectionListener: first
              - a.login: alice
              - a.addConnectionListener: second
              - a.logout: {}
            """
        let holds = try run(steps + """

              - expect:
                  a.connectionListeners: { first: [connecting, connected, disconnected], second: [disconnected], third: [] }
            """)
        #expect(holds.verdict == .passed, "\(holds.message ?? "")")
        // A listener called twice for one change shows as an extra entry.
        let twice = try run(steps + """

              - expect:
                  a.connectionListeners: { first: [connecting, connected, disconnected], second: [disconnected, disconnected] }
            """)
        #expect(twice.verdict == .failed)
        #expect(twice.message?.contains("listener second was called with [\"disconnected\"], expected") == true,
                "\(twice.message ?? "")")
    }

    @Test func connectionListenersTakeAMappingOfIdsToEventLists() {
        #expect(throws: (any Error).self) {
            try ScenarioLoader.load("""
                id: harness/bad
                title: Bad
                source: "x"
                steps:
                  - client: a
                  - expect: { a.connectionListeners: [connecting] }
                """)
        }
    }
}
