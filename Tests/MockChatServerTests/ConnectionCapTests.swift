import ChatProtocol
import EventLoop
import MockChatServer
import MockChatTestSupport
import Testing

/// Sockets that never log in cannot lock others out: one address may hold only so many
/// of them, and at the connection cap the control API still answers.
@Suite("Connection caps")
struct ConnectionCapTests {
    func status(_ outcome: Result<WebSocket, WebSocketClient.Failure>?) -> Int? {
        guard case .failure(.rejected(let status, _)) = outcome else { return nil }
        return status
    }

    @Test func oneAddressMayHoldOnlySoManySessionsThatHaveNotLoggedIn() throws {
        let f = try ServerFixture(server: { $0.maxPendingLoginsPerAddress = 3 })
        let waiting = try (0..<3).map { _ in try f.connect() }
        #expect(status(f.tryConnect()) == 503)
        #expect(try f.control("GET", "/control/health").status == 200)
        // A login frees its place at once.
        _ = waiting[0].login(uid: "alice", device: "a", platform: .desktop, presence: .none)
        let next = try f.connect()
        #expect(status(f.tryConnect()) == 503)
        // The login deadline frees the others.
        f.advance(seconds: 10)
        #expect(next.closeInfo?.received == 4010)
        #expect(waiting[1].closeInfo?.received == 4010)
        #expect(try f.connect().isClosed == false)
        #expect(f.server.engine.onlineUsers == ["alice"])
    }

    @Test func atTheConnectionCapUpgradesGet503AndTheControlAPIStillAnswers() throws {
        let f = try ServerFixture(server: { $0.web.maxConnections = 4; $0.web.reservedConnections = 2 })
        let clients = try (0..<4).map { _ in try f.connect() }
        #expect(status(f.tryConnect()) == 503)
        let health = try f.control("GET", "/control/health")
        #expect(health.status == 200)
        #expect(try f.control("GET", "/control/connections").json?["connections"]?.arrayValue?.count == 4)
        _ = clients[0].request("logout")
        f.settle()
        // Still not logged in: clients[0] got ERR_NOT_LOGGED_IN and stays, so the cap holds.
        #expect(status(f.tryConnect()) == 503)
        clients[1].socket.close(code: 1000)
        f.settle()
        #expect(try f.connect().isClosed == false)
    }
}
