import Testing
@testable import EventLoop

/// Real sockets on loopback: a server and a client on one loop with a virtual clock.
@Suite struct WebSocketLoopbackTests {
    final class Harness {
        let loop: EventLoop
        var server: WebServer!
        var serverSockets: [WebSocket] = []
        var serverReceived: [String] = []

        init() throws {
            loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
            server = try WebServer(loop: loop, address: SocketAddress(host: "127.0.0.1", port: 0)) {
                [unowned self] request, isUpgrade, _ in
                guard isUpgrade, request.path == "/v1/ws" else { return .respond(.text(status: 404, "no\n")) }
                return .upgrade { socket in
                    self.serverSockets.append(socket)
                    socket.onText = { [unowned socket] bytes in
                        self.serverReceived.append(String(decoding: bytes, as: UTF8.self))
                        socket.send(text: Array("echo:".utf8) + Array(bytes))
                    }
                }
            }
        }

        func connect(seed: UInt64 = 1) -> Result<WebSocket, WebSocketClient.Failure>? {
            var outcome: Result<WebSocket, WebSocketClient.Failure>?
            WebSocketClient.connect(on: loop, to: server.address, seed: seed) { outcome = $0 }
            loop.run(timeout: 5) { outcome != nil }
            return outcome
        }
    }

    @Test func echoAndCloseHandshakeLeaveNoHandleOpen() throws {
        let harness = try Harness()
        let client = try #require(harness.connect()).get()
        var replies: [String] = []
        var closed: WebSocket.CloseInfo?
        client.onText = { replies.append(String(decoding: $0, as: UTF8.self)) }
        client.onClosed = { closed = $0 }
        client.send(text: Array("hello".utf8))
        #expect(harness.loop.settle())
        #expect(replies == ["echo:hello"])
        #expect(harness.serverReceived == ["hello"])

        client.close(code: 1000, reason: "bye")
        #expect(harness.loop.run(timeout: 5) { closed != nil })
        #expect(closed?.sent == 1000)
        #expect(closed?.received == 1000)
        #expect(closed?.abnormal == nil)
        #expect(harness.loop.settle())
        #expect(harness.server.openConnections == 0)
        #expect(harness.loop.shutdown() == 0)
    }

    /// Codes IANA registered after RFC 6455 (1012 service restart, 1013 try again later,
    /// 1014 bad gateway) close cleanly both ways: the other end echoes them, where wslay
    /// alone answers 1002 (fails before RegisteredCloseWatch: sent 1002, received nil).
    @Test(arguments: [UInt16(1012), 1013, 1014])
    func registeredCloseCodesAreEchoedByBothEnds(code: UInt16) throws {
        for serverCloses in [true, false] {
            let harness = try Harness()
            let client = try #require(harness.connect()).get()
            var clientSide: WebSocket.CloseInfo?
            var serverSide: WebSocket.CloseInfo?
            client.onClosed = { clientSide = $0 }
            #expect(harness.loop.settle())
            let server = try #require(harness.serverSockets.first)
            server.onClosed = { serverSide = $0 }
            (serverCloses ? server : client).close(code: code, reason: "later")
            #expect(harness.loop.run(timeout: 5) { clientSide != nil && serverSide != nil })
            for info in [clientSide, serverSide] {
                #expect(info?.sent == code && info?.received == code && info?.abnormal == nil,
                        "\(serverCloses ? "server" : "client") closes with \(code): \(String(describing: info))")
            }
            #expect(harness.loop.shutdown() == 0)
        }
    }

    @Test func unknownPathIsAnswered404() throws {
        let harness = try Harness()
        var outcome: Result<WebSocket, WebSocketClient.Failure>?
        WebSocketClient.connect(on: harness.loop, to: harness.server.address, path: "/nope", seed: 2) { outcome = $0 }
        harness.loop.run(timeout: 5) { outcome != nil }
        guard case .failure(.rejected(let status, _))? = outcome else {
            Issue.record("expected a rejection, got \(String(describing: outcome))")
            return
        }
        #expect(status == 404)
        #expect(harness.loop.shutdown() == 0)
    }

    @Test func refusedConnectionReportsConnectFailure() throws {
        let loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
        var outcome: Result<WebSocket, WebSocketClient.Failure>?
        WebSocketClient.connect(on: loop, to: SocketAddress(host: "127.0.0.1", port: 1), seed: 3) { outcome = $0 }
        loop.run(timeout: 5) { outcome != nil }
        guard case .failure(.connect(let error))? = outcome else {
            Issue.record("expected a connect failure, got \(String(describing: outcome))")
            return
        }
        #expect(error.name == "ECONNREFUSED")
        #expect(loop.shutdown() == 0)
    }

    @Test func oversizedMessageClosesWith1009() throws {
        let harness = try Harness()
        let client = try #require(harness.connect()).get()
        var closed: WebSocket.CloseInfo?
        client.onClosed = { closed = $0 }
        client.send(text: [UInt8](repeating: 65, count: 64 * 1024 + 1))
        #expect(harness.loop.run(timeout: 5) { closed != nil })
        #expect(closed?.received == 1009)
        #expect(harness.loop.shutdown() == 0)
    }

    @Test func peerThatIgnoresOurCloseIsCutOffAtTheDeadline() throws {
        let harness = try Harness()
        let client = try #require(harness.connect()).get()
        client.connection.onRead = { _ in }  // the client stops answering frames
        var serverClosed: WebSocket.CloseInfo?
        harness.loop.settle()
        let serverSocket = try #require(harness.serverSockets.first)
        serverSocket.onClosed = { serverClosed = $0 }
        serverSocket.close(code: 1001)
        #expect(harness.loop.settle())
        #expect(serverClosed == nil)
        harness.loop.clock.advance(to: harness.loop.clock.now.advanced(by: 5_000)) { harness.loop.settle() }
        #expect(serverClosed?.sent == 1001)
        #expect(serverClosed?.abnormal != nil)
        #expect(harness.loop.shutdown() == 0)
    }

    @Test func systemClockTimersFireInDeadlineOrder() throws {
        let loop = try EventLoop()
        var fired: [Int] = []
        loop.clock.schedule(after: 20) { fired.append(2) }
        loop.clock.schedule(after: 5) { fired.append(1) }
        let cancelled = loop.clock.schedule(after: 10) { fired.append(99) }
        loop.clock.cancel(cancelled)
        #expect(loop.run(timeout: 5) { fired.count == 2 })
        #expect(fired == [1, 2])
        #expect(loop.shutdown() == 0)
    }
}
