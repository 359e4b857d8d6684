import ChatProtocol
@testable import ProtocolFuzzer
import Testing
import WireKit

/// Wire mode: the server's answers to bad input, and the checks themselves.
@Suite struct WireFuzzerTests {
    @Test func aShortSeededRunGetsTheDocumentedAnswers() {
        var options = WireFuzzer.Options()
        options.seed = 77
        options.steps = 3_000
        options.jobs = 1
        options.healthEvery = 250
        let report = WireFuzzer(options: options).run()
        #expect(report.steps == 3_000)
        #expect(report.crashes == 0, "\(report.crashMessages)")
        #expect(report.divergences == 0, "\(report.findings)")
        #expect(report.stepsByKind.keys.contains { $0.hasPrefix("handshake/") })
        #expect(report.stepsByKind.keys.contains { $0.hasPrefix("frames/") })
        #expect(report.stepsByKind.keys.contains { $0.hasPrefix("message/") })
    }

    @Test func theSameSeedGivesTheSameInputs() {
        var options = WireFuzzer.Options()
        options.seed = 5
        let fuzzer = WireFuzzer(options: options)
        #expect(fuzzer.input(index: 123).bytes == fuzzer.input(index: 123).bytes)
        #expect(fuzzer.input(index: 123).bytes != fuzzer.input(index: 124).bytes)
        options.seed = 6
        #expect(WireFuzzer(options: options).input(index: 123).bytes != fuzzer.input(index: 123).bytes)
    }

    @Test func theRunnerNoticesAWrongAnswer() throws {
        let runner = try WireRunner(seed: 1, roster: .embedded())
        defer { runner.shutdown() }
        #expect(runner.startControl() == nil)
        let unmasked = ClientFrame(opcode: 1, masked: false, payload: Array("{}".utf8)).encoded(mask: 0)
        var input = WireInput(stage: .frames, label: "t", bytes: unmasked, expectation: .close([1002]))
        #expect(runner.run(input, deadlineTest: false) == [])
        input.expectation = .close([1007])
        #expect(runner.run(input, deadlineTest: false).count == 1)
        let request = Array("GET /v2 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        #expect(runner.run(WireInput(stage: .handshake, label: "t", bytes: request, expectation: .status([404])),
                           deadlineTest: false) == [])
        #expect(!runner.run(WireInput(stage: .handshake, label: "t", bytes: request, expectation: .status([400])),
                            deadlineTest: false).isEmpty)
        let partial = Array("GET /v1/ws HTTP/1.1\r\nHost".utf8)
        #expect(runner.run(WireInput(stage: .handshake, label: "t", bytes: partial, expectation: .silence),
                           deadlineTest: true) == [])
        let ping = WireInput(stage: .message, label: "t", bytes: Array("{\"id\":3,\"op\":\"users.get\"}".utf8),
                             expectation: .reply, meaning: .value(["id": 3, "op": "users.get"]))
        #expect(runner.run(ping, deadlineTest: false) == [])
        #expect(runner.healthCheck() == nil)
    }

    @Test func theOracleFollowsTheDocumentedOrderOfChecks() {
        let roster = Roster.embedded()
        func predict(_ value: JSONValue, _ session: RequestOracle.Session = .awaitingLogin) -> RequestOracle.Outcome {
            RequestOracle.predict(value, session: session, roster: roster, authKey: "mockchat-dev-key").outcome
        }
        #expect(predict([1, 2]) == .error(["ERR_BAD_REQUEST"]))
        #expect(predict(["op": "ping"]) == .error(["ERR_BAD_REQUEST"]))
        #expect(predict(["id": 1.5, "op": "ping"]) == .error(["ERR_BAD_REQUEST"]))
        #expect(predict(["id": 5]) == .error(["ERR_INVALID_FIELD"]))
        #expect(predict(["id": 4, "op": "dance"]) == .error(["ERR_UNKNOWN_OP"]))
        #expect(predict(["id": 1, "op": "ping"]) == .error(["ERR_NOT_LOGGED_IN"]))
        #expect(predict(["id": 1, "op": "ping"], .loggedIn(uid: "bob")) == .result(op: "ping", uid: nil))
        #expect(predict(["id": 1, "op": "users.list", "limit": 0], .loggedIn(uid: "bob")) == .error(["ERR_INVALID_LIMIT"]))
        #expect(predict(["id": 1, "op": "users.list", "limit": .null], .loggedIn(uid: "bob")) == .result(op: "users.list", uid: nil))
        #expect(predict(["id": 1, "op": "users.list", "cursor": "page2"], .loggedIn(uid: "bob")) == .error(["ERR_INVALID_CURSOR"]))
        #expect(predict(["id": 1, "op": "login", "deviceId": "x"]) == .error(["ERR_INVALID_FIELD"]))
        #expect(predict(["id": 1, "op": "login", "uid": "nobody", "authKey": "bad"]) == .error(["ERR_AUTH_FAILED"]))
        #expect(predict(["id": 1, "op": "login", "uid": "nobody", "authKey": "mockchat-dev-key"]) == .error(["ERR_UID_NOT_FOUND"]))
        #expect(predict(["id": 1, "op": "login", "token": "oscar-token"]) == .error(["ERR_USER_DEACTIVATED"]))
        #expect(predict(["id": 1, "op": "login", "uid": "bob", "token": "alice-token"]) == .error(["ERR_AUTH_FAILED"]))
        #expect(predict(["id": 1, "op": "login", "uid": "bob", "authKey": "mockchat-dev-key", "presence": .null])
            == .result(op: "login", uid: "bob"))
        #expect(predict(["id": 1, "op": "login", "uid": "bob"], .loggedIn(uid: "bob")) == .error(["ERR_ALREADY_LOGGED_IN"]))
        var deep: JSONValue = 1
        for _ in 0..<32 { deep = [deep] }
        #expect(predict(["id": 1, "op": "ping", "x": deep], .loggedIn(uid: "bob")) == .error(["ERR_BAD_REQUEST"]))
    }
}
