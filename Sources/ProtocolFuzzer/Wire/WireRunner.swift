import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import WireKit

/// Runs wire inputs against an in-process server on one loop with a virtual clock,
/// and says what each answer got wrong.
///
/// Handshake and frame inputs each get a fresh connection. Message inputs share a
/// session connection, sometimes logged in, which is reopened whenever the server
/// closes it. Everything shares the loop, so after `settle()` every answer has
/// arrived: there is no waiting on wall time.
final class WireRunner {
    /// The session connection and what the server thinks of it.
    struct Session {
        var client: RawConnection
        var state: RequestOracle.Session
    }

    let loop: EventLoop
    let server: ChatServer
    let roster: Roster
    let authKey: String
    private(set) var control: ControlClient!
    private var session: Session?
    private var masks: FuzzRandom
    /// TCP connections opened by inputs.
    private(set) var connections = 0
    /// Checks of the inputs read in process.
    var surfaces = SurfaceRunner()

    init(seed: UInt64, roster: Roster) throws {
        loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
        do {
            let fixtures = try FixtureSet.embedded()
            var configuration = ChatServer.Configuration()
            configuration.address = SocketAddress(host: "127.0.0.1", port: 0)
            server = try ChatServer(loop: loop, configuration: configuration, directory: fixtures.directory,
                                    settings: fixtures.settings)
            authKey = fixtures.settings.authKey
        } catch {
            loop.shutdown()
            throw error
        }
        self.roster = roster
        masks = FuzzRandom(seed: seed ^ 0x6D61_736B)
    }

    /// Connects and logs in the control client; nil when it worked.
    func startControl() -> String? {
        restartControl()
    }

    /// Connects and logs in a new control client, closing the old one; nil when it worked.
    func restartControl() -> String? {
        closeSession()
        control?.close()
        loop.settle()
        control = ControlClient(loop: loop, server: server.address, seed: masks.fork())
        loop.settle()
        guard control.isOpen else { return "the control client cannot connect" }
        let id = control.login()
        loop.settle()
        guard control.reply(to: id)?["result"] != nil else { return "the control client cannot log in" }
        return nil
    }

    func shutdown() {
        session?.client.close()
        session = nil
        loop.settle(timeout: 1)
        server.shutdown()
        loop.settle(timeout: 1)
        loop.shutdown()
    }

    // MARK: Health

    /// Pings the control client and checks that no connection leaked; nil when healthy.
    func healthCheck() -> String? {
        closeSession()
        guard control.isOpen else { return "the control client was disconnected (\(control.closed.map { "\($0)" } ?? "?"))" }
        let id = control.ping()
        guard loop.settle() else { return "the loop did not settle after a control ping" }
        guard control.reply(to: id)?["result"]?["pong"] == true else { return "the control client's ping was not answered" }
        let reply = server.control(HTTPRequest(method: "GET", target: "/control/connections", version: "HTTP/1.1",
                                               headers: [], body: []))
        let sessions = (try? JSONParser.parse(reply.body))?["connections"]?.arrayValue?.count ?? -1
        guard sessions == 1 else { return "GET /control/connections lists \(sessions) sessions; only the control client should be left" }
        guard server.openConnectionCount == 1 else {
            return "\(server.openConnectionCount) TCP connections are open; only the control client should be left"
        }
        return nil
    }

    // MARK: Inputs

    /// Runs one input; the problems found (empty when the answer was the documented one).
    func run(_ input: WireInput, deadlineTest: Bool) -> [String] {
        switch input.stage {
        case .handshake: return runHandshake(input, deadlineTest: deadlineTest)
        case .frames: return runFrames(input)
        case .message: return runMessage(input)
        case .control: return runControl(input)
        case .recording, .scenario, .driverLine, .flags, .manifest: return surfaces.run(input)
        }
    }

    func connect() -> RawConnection? {
        var client: RawConnection?
        RawConnection.connect(on: loop, to: server.address) { client = try? $0.get() }
        connections += 1
        loop.settle()
        return client.flatMap { $0.ended ? nil : $0 }
    }

    func deliver(_ bytes: [UInt8], to client: RawConnection, oneByteAtATime: Bool) -> Bool {
        if oneByteAtATime {
            for byte in bytes {
                client.write([byte])
                guard loop.settle() else { return false }
                if client.ended { break }
            }
            return true
        }
        client.write(bytes)
        return loop.settle()
    }

    private func runHandshake(_ input: WireInput, deadlineTest: Bool) -> [String] {
        guard let client = connect() else { return ["cannot connect to the server"] }
        defer { client.close(); loop.settle() }
        guard deliver(input.bytes, to: client, oneByteAtATime: input.oneByteAtATime) else { return ["the loop did not settle"] }
        var problems: [String] = []
        if let malformed = client.stream.malformed { problems.append("malformed answer: \(malformed)") }
        let response = client.stream.response
        func checkStatus(_ allowed: Set<Int>) {
            guard let response else { return problems.append("no response (\(client.ended ? "closed" : "still open"))") }
            if !allowed.contains(response.status) {
                problems.append("answered \(response.status) \(String(decoding: response.body.prefix(80), as: UTF8.self))"
                    + ", expected \(allowed.sorted())")
            }
            if response.status != 101, !client.ended { problems.append("kept the connection open after \(response.status)") }
        }
        switch input.expectation {
        case .status(let allowed):
            checkStatus(allowed)
        case .statusOrSilence(let allowed):
            if response != nil { checkStatus(allowed) } else if client.stream.hasUnreadBytes {
                problems.append("sent an incomplete response")
            }
        case .silence:
            if response != nil || client.stream.hasUnreadBytes { problems.append("answered an incomplete request") }
            if client.ended { problems.append("closed an incomplete request before the handshake deadline") }
            if deadlineTest, problems.isEmpty { problems += checkHandshakeDeadline(client) }
        default:
            problems.append("no handshake check for \(input.expectation)")
        }
        return problems
    }

    /// §14: no complete request within 10 s of clock time closes the connection.
    private func checkHandshakeDeadline(_ client: RawConnection) -> [String] {
        closeSession()
        let id = control.ping()
        loop.settle()
        guard control.reply(to: id) != nil else { return ["the control client's ping was not answered"] }
        advance(milliseconds: 9_999)
        if client.ended { return ["closed an incomplete request before 10 s"] }
        advance(milliseconds: 1)
        var problems: [String] = []
        if !client.ended { problems.append("kept an incomplete request open past the 10 s handshake deadline") }
        if client.stream.response != nil { problems.append("answered an incomplete request at the deadline") }
        return problems
    }

    private func advance(milliseconds: Int64) {
        let loop = self.loop
        loop.clock.advance(to: loop.clock.now.advanced(by: milliseconds)) { loop.settle() }
        loop.settle()
    }

    private func upgradeRequest() -> [UInt8] {
        UpgradeRequest(host: "127.0.0.1", key: UpgradeRequest.key((0..<16).map { _ in masks.byte() })).bytes
    }

    private func openWebSocket() -> RawConnection? {
        guard let client = connect() else { return nil }
        client.write(upgradeRequest())
        loop.settle()
        guard client.stream.response?.status == 101, !client.ended else {
            client.close()
            loop.settle()
            return nil
        }
        return client
    }

    private func runFrames(_ input: WireInput) -> [String] {
        guard let client = openWebSocket() else { return ["a valid upgrade was refused"] }
        defer { client.close(); loop.settle() }
        guard deliver(input.bytes, to: client, oneByteAtATime: input.oneByteAtATime) else { return ["the loop did not settle"] }
        return FrameCheck.check(Array(client.takeFrames()), ended: client.ended, malformed: client.stream.malformed,
                                against: input.expectation)
    }

    // MARK: Messages

    private func closeSession() {
        guard let session else { return }
        session.client.close()
        self.session = nil
        loop.settle()
    }

    /// The session connection, opened (and half the time logged in) if needed.
    private func currentSession() -> Session? {
        if let session, !session.client.ended { return session }
        closeSession()
        guard let client = openWebSocket() else { return nil }
        var state = RequestOracle.Session.awaitingLogin
        if masks.chance(0.5) {
            let uid = masks.pick(["alice", "bob", "carol", "dave"])
            let login = "{\"id\":0,\"op\":\"login\",\"uid\":\"\(uid)\",\"authKey\":\"\(authKey)\",\"deviceId\":\"fuzz-session\","
                + "\"platform\":\"web\",\"presence\":{\"mode\":\"none\"}}"
            client.write(ClientFrame(opcode: 1, payload: Array(login.utf8)).encoded(mask: UInt32(truncatingIfNeeded: masks.next())))
            loop.settle()
            let replies = client.takeFrames()
            guard replies.count == 1, (try? JSONParser.parse(replies.first!.payload))?["result"] != nil else { return nil }
            state = .loggedIn(uid: uid)
        }
        session = Session(client: client, state: state)
        return session
    }

    private func runMessage(_ input: WireInput) -> [String] {
        guard let current = currentSession() else { return ["cannot open the session connection"] }
        let client = current.client
        var specs: [ClientFrame] = []
        let parts = Self.split(input.bytes, into: max(1, input.fragments))
        for (index, part) in parts.enumerated() {
            specs.append(ClientFrame(fin: index == parts.count - 1, opcode: index == 0 ? 1 : 0, payload: part))
            if index == 0, input.pingBetweenFragments, parts.count > 1 { specs.append(ClientFrame(opcode: 9, payload: [0x70])) }
        }
        let bytes = specs.flatMap { $0.encoded(mask: UInt32(truncatingIfNeeded: masks.next())) }
        guard deliver(bytes, to: client, oneByteAtATime: input.oneByteAtATime) else { return ["the loop did not settle"] }
        var frames = Array(client.takeFrames())
        var problems: [String] = []
        if input.pingBetweenFragments, parts.count > 1 {
            let pongs = frames.filter { $0.opcode == 10 }
            if pongs.count != 1 || pongs.first?.payload != [0x70] { problems.append("the ping between fragments got \(pongs.count) pongs") }
            frames.removeAll { $0.opcode == 10 }
        }
        if case .close = input.expectation {
            problems += FrameCheck.check(frames, ended: client.ended, malformed: client.stream.malformed, against: input.expectation)
            closeSession()
            return problems
        }
        let prediction: RequestOracle.Prediction
        switch input.meaning {
        case .value(let value):
            prediction = RequestOracle.predict(value, session: current.state, roster: roster, authKey: authKey)
        case .notARequest:
            prediction = RequestOracle.Prediction(outcome: .error([ErrorCode.badRequest.rawValue]), id: nil)
        case .unknown:
            prediction = RequestOracle.Prediction(outcome: .any, id: nil)
        }
        let check = ReplyCheck.check(frames, ended: client.ended, prediction: prediction)
        problems += check.problems
        if let uid = check.loggedIn { session?.state = .loggedIn(uid: uid) }
        if check.closeFrame, !client.ended {
            // Finish the closing handshake: the server must then end the stream.
            client.write(ClientFrame(opcode: 8, payload: ClientFrame.closePayload(code: 1000))
                .encoded(mask: UInt32(truncatingIfNeeded: masks.next())))
            loop.settle()
            if !client.ended { problems.append("the stream stayed open after the closing handshake") }
        }
        if check.closed || client.ended { closeSession() }
        return problems
    }

    /// `bytes` cut into `parts` pieces at random-looking but reproducible points.
    static func split(_ bytes: [UInt8], into parts: Int) -> [[UInt8]] {
        guard parts > 1, bytes.count >= parts else { return [bytes] }
        var cuts: [Int] = []
        for part in 1..<parts { cuts.append(bytes.count * part / parts - (part % 2)) }
        var pieces: [[UInt8]] = []
        var start = 0
        for cut in cuts + [bytes.count] where cut >= start {
            pieces.append(Array(bytes[start..<cut]))
            start = cut
        }
        return pieces
    }
}
