import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

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

/// A real `mockchat serve` with few descriptors, met by a burst of upgrades past its cap.
@Suite("Descriptor cap")
struct DescriptorCapTests {
    /// Starts `mockchat serve` with a file-descriptor limit of `descriptors`; returns it and its port.
    static func serve(descriptors: Int) throws -> (Process, Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -n \(descriptors) && exec \"$0\" serve --port 0 --log-level error",
                             try #require(Robustness.Faults.mockchatBinary, "the mockchat executable is not built")]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, try Robustness.Faults.listeningPort(announcedOn: output))
    }

    /// Fails before the refusal at accept freed its descriptor at once: of 300 upgrades,
    /// 73 met a reset and 2 an end of stream with no answer (the rest 503).
    @Test func aBurstOfUpgradesAtTheDescriptorCapGets503WithRetryAfter() throws {
        let (process, port) = try Self.serve(descriptors: 256)
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let address = SocketAddress(host: "127.0.0.1", port: port)
        // Sessions that never log in, until the server's cap answers 503.
        var held: [WebSocket] = []
        var refused: Int?
        while refused == nil, held.count < 1_000 {
            var outcome: Result<WebSocket, WebSocketClient.Failure>?
            WebSocketClient.connect(on: loop, to: address, seed: UInt64(held.count)) { outcome = $0 }
            #expect(loop.run(timeout: 10) { outcome != nil })
            switch outcome {
            case .success(let socket): held.append(socket)
            case .failure(.rejected(let status, _)): refused = status
            default: refused = -1
            }
        }
        #expect(refused == 503)
        // Then 300 upgrades at once.
        var burst: [RawConnection] = []
        for _ in 0..<300 {
            TCPConnection.connect(on: loop, to: address) { result in
                guard case .success(let connection) = result else { return }
                let raw = RawConnection(connection)
                raw.write(Array(handshakeRequest().utf8))
                burst.append(raw)
            }
        }
        #expect(loop.run(timeout: 30) { burst.count == 300 && burst.allSatisfy(\.ended) })
        let replies = burst.map { HTTPReply($0.received) }
        let busy = replies.filter { $0?.status == 503 }
        let unanswered = replies.filter { $0 == nil }.count
        print("descriptor cap: limit 256, \(held.count) sessions held, then a burst of 300 upgrades: "
              + "\(busy.count) × 503, \(unanswered) without an answer, "
              + "\(busy.filter { $0?.headerValues("Retry-After") == ["1"] }.count) with Retry-After: 1")
        #expect(busy.count == 300, "every upgrade of the burst is answered 503, none reset")
        #expect(busy.allSatisfy { $0?.headerValues("Retry-After") == ["1"] })
        for socket in held { socket.drop() }
    }
}
