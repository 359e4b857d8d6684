import ChatProtocol
import EventLoop
import Testing
@testable import ReferenceClient

/// The driver over real loopback sockets on a virtual clock, against a tiny in-test
/// server that answers login, ping and logout.
@Suite struct SDKClientTests {
    /// Just enough of a chat server to drive the client.
    final class EchoChatServer {
        let loop: EventLoop
        var web: WebServer!
        /// Every request frame received, as parsed JSON.
        var requests: [JSONValue] = []

        init(loop: EventLoop) throws {
            self.loop = loop
            web = try WebServer(loop: loop, address: SocketAddress(host: "127.0.0.1", port: 0)) {
                [unowned self] _, isUpgrade, _ in
                guard isUpgrade else { return .respond(.text(status: 404, "no\n")) }
                return .upgrade { socket in
                    socket.onText = { [unowned self, unowned socket] bytes in self.answer(bytes, on: socket) }
                }
            }
        }

        var ops: [String] { requests.compactMap { $0["op"]?.stringValue } }

        private func answer(_ bytes: UnsafeRawBufferPointer, on socket: WebSocket) {
            guard let json = try? JSONParser.parse(bytes), let id = json["id"].flatMap(RequestID.init(json:)) else { return }
            requests.append(json)
            let time = loop.clock.now.seconds
            switch json["op"]?.stringValue {
            case "login":
                let user = User(uid: json["uid"]?.stringValue ?? "?", status: .online, lastActiveAt: time)
                socket.send(text: ServerMessage.loggedIn(id: id, user: user, connectionId: "c1", serverTime: time).bytes)
            case "ping":
                socket.send(text: ServerMessage.pong(id: id, serverTime: time).bytes)
            case "logout":
                socket.send(text: ServerMessage.result(id: id, JSONObject()).bytes)
                socket.close(code: CloseCode.normal.rawValue)
            default:
                socket.send(text: ServerMessage.error(id: id, ChatError(.unknownOp)).bytes)
            }
        }
    }

    final class Stage {
        let loop: EventLoop
        let server: EchoChatServer
        let client: SDKClient

        init(profile: Profile = Fixtures.cometChat, seed: UInt64 = 7) throws {
            loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
            server = try EchoChatServer(loop: loop)
            client = SDKClient(name: "a", loop: loop, server: server.web.address, profile: profile, seed: seed)
        }

        /// Performs a call and runs the loop until it completes.
        func call(_ command: SDKCommand) -> CallResult? {
            guard let id = client.perform(command) else { return nil }
            loop.run(timeout: 5) { client.result(of: id) != nil }
            return client.result(of: id)
        }

        func advance(milliseconds: Int64) {
            loop.settle()
            loop.clock.advance(to: loop.clock.now.advanced(by: milliseconds)) { loop.settle() }
            loop.settle()
        }

        func count(_ match: (ClientObservation.Event) -> Bool) -> Int {
            client.log.filter { match($0.event) }.count
        }

        var openings: Int { count { if case .socketOpening = $0 { true } else { false } } }

        func finish() -> Int32 {
            client.shutdown()
            loop.settle()
            return loop.shutdown()
        }
    }

    @Test func autoLoginConnectsKeepsAliveAndLogsOut() throws {
        let stage = try Stage()
        _ = stage.call(.initialize(AppSettings()))
        let login = stage.call(.login(uid: "alice", authKey: "key"))
        #expect(login?.isSuccess == true)
        #expect(stage.client.status == .connected)
        #expect(stage.client.loggedInUser?.uid == "alice")

        stage.advance(milliseconds: 10_000)
        #expect(stage.server.ops == ["login", "ping"])
        #expect(stage.count { $0 == .timerFired(.keepAlive) } == 1)

        #expect(stage.call(.logout)?.isSuccess == true)
        #expect(stage.client.status == .disconnected)
        #expect(stage.server.ops == ["login", "ping", "logout"])
        #expect(stage.finish() == 0)
    }

    @Test func weakNetworkLosesThePongAndTheClientReconnects() throws {
        let stage = try Stage()
        _ = stage.call(.initialize(AppSettings()))
        _ = stage.call(.login(uid: "alice", authKey: "key"))
        stage.client.perform(.network(.weak))
        stage.advance(milliseconds: 10_000)   // heartbeat ping; its pong is lost
        #expect(stage.count { if case .frameDiscarded = $0 { true } else { false } } == 1)
        stage.advance(milliseconds: 10_000)   // pong timeout: drop, backoff armed
        #expect(stage.count { $0 == .socketDropped } == 1)
        stage.advance(milliseconds: 50)       // the reconnection attempt
        #expect(stage.openings == 2)
        #expect(stage.server.ops == ["login", "ping", "login"])
        #expect(stage.server.requests.last?["reconnect"] == .bool(true))
        #expect(stage.client.status == .connecting)   // its login reply is lost as well
        #expect(stage.finish() == 0)
    }

    @Test func networkDownDropsTheSocketAndUpReconnects() throws {
        let stage = try Stage()
        _ = stage.call(.initialize(AppSettings()))
        _ = stage.call(.login(uid: "alice", authKey: "key"))
        stage.client.perform(.network(.down))
        #expect(stage.client.status == .disconnected)
        stage.advance(milliseconds: 60_000)
        #expect(stage.openings == 1)
        stage.client.perform(.network(.up))
        stage.advance(milliseconds: 50)
        #expect(stage.openings == 2)
        #expect(stage.client.status == .connected)
        let events = stage.client.log.compactMap { entry -> ConnectionEvent? in
            if case .connection(let event, _) = entry.event { return event }
            return nil
        }
        #expect(events == [.connecting, .connected, .disconnected, .connecting, .connected])
        #expect(stage.finish() == 0)
    }

    @Test func relaunchThenInitializeReconnectsTheSavedUser() throws {
        let stage = try Stage()
        _ = stage.call(.initialize(AppSettings()))
        _ = stage.call(.login(uid: "alice", authKey: "key"))
        stage.client.perform(.relaunch)
        #expect(stage.client.status == .disconnected)
        #expect(stage.client.loggedInUser?.uid == "alice")
        #expect(stage.count { $0 == .socketDropped } == 1)
        #expect(stage.call(.initialize(AppSettings()))?.isSuccess == true)
        #expect(stage.loop.run(timeout: 5) { stage.client.status == .connected })
        #expect(stage.openings == 2)
        #expect(stage.server.ops == ["login", "login"])
        #expect(stage.server.requests.last?["reconnect"] == .bool(false))
        #expect(stage.finish() == 0)
    }

    @Test func manualConnectToAnUnreachableServerFailsWithErrWebsocketError() throws {
        let loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
        let client = SDKClient(name: "m", loop: loop, server: SocketAddress(host: "127.0.0.1", port: 1),
                               profile: Fixtures.cometChat, seed: 1)
        client.perform(.initialize(AppSettings(autoEstablishSocketConnection: false)))
        client.perform(.login(uid: "alice", authKey: "key"))
        let connect = try #require(client.perform(.connect))
        loop.run(timeout: 5) { client.result(of: connect) != nil }
        #expect(client.result(of: connect)?.errorCode == ErrorCode.webSocketError.rawValue)
        #expect(client.status == .disconnected)
        client.shutdown()
        #expect(loop.shutdown() == 0)
    }

    @Test func sameSeedGivesTheSameLog() throws {
        func run() throws -> [ClientObservation] {
            let stage = try Stage(seed: 42)
            _ = stage.call(.initialize(AppSettings()))
            _ = stage.call(.login(uid: "alice", authKey: "key"))
            stage.advance(milliseconds: 25_000)
            stage.client.perform(.didBackground)
            stage.advance(milliseconds: 1_000)
            stage.client.perform(.foreground)
            stage.advance(milliseconds: 1_000)
            let log = stage.client.log
            #expect(stage.finish() == 0)
            return log
        }
        let first = try run()
        #expect(first.count > 10)
        #expect(try run() == first)
    }
}
