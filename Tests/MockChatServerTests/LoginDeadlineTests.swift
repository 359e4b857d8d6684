import ChatProtocol
import EventLoop
import MockChatServer
import MockChatTestSupport
import Testing

/// A socket that never logs in is closed with 4010 at the login deadline, whatever it
/// sends meanwhile; logged-in sessions are not affected.
@Suite("Login deadline")
struct LoginDeadlineTests {
    @Test func aSocketThatOnlyPingsIsClosedAt10Seconds() throws {
        let f = try ServerFixture()
        let start = f.now
        let idle = try f.connect()
        let pinger = try f.connect()
        let member = try f.connect()
        _ = member.login(uid: "alice", device: "a", platform: .desktop, presence: .none)
        for _ in 0..<9 {
            f.advance(seconds: 1)
            pinger.socket.sendPing()
            _ = member.request("ping")
        }
        f.advance(seconds: 0.999)
        #expect(!idle.isClosed && !pinger.isClosed)
        f.advance(seconds: 0.001)
        for client in [idle, pinger] {
            #expect(client.closeInfo?.received == CloseCode.loginTimeout.rawValue)
            #expect(client.closedAt == start.advanced(by: 10_000))
        }
        #expect(!member.isClosed)
        #expect(f.server.engine.onlineUsers == ["alice"])
    }

    @Test func theDeadlineFollowsTheAppSetting() throws {
        let f = try ServerFixture { $0.loginTimeoutMilliseconds = 2_500 }
        let idle = try f.connect()
        f.advance(seconds: 2.4)
        #expect(!idle.isClosed)
        f.advance(seconds: 0.1)
        #expect(idle.closeInfo?.received == 4010)
    }

    @Test func aLateLoginIsNotPossibleButAnEarlyOneStaysOpen() throws {
        let f = try ServerFixture()
        let early = try f.connect()
        f.advance(seconds: 9)
        _ = early.login(uid: "bob", device: "b", platform: .desktop, presence: .none)
        f.advance(seconds: 20)
        #expect(!early.isClosed)
    }
}

/// A frame the kernel has received counts before the heartbeat closes its connection,
/// even when the server's loop was too busy to read it in time.
@Suite("Heartbeat after a stall")
struct HeartbeatStallTests {
    @Test func aFrameWaitingInTheKernelKeepsTheConnection() throws {
        let f = try ServerFixture()
        let alice = try f.connect()
        _ = alice.login(uid: "alice", device: "a", platform: .desktop, presence: .none)
        let loggedInAt = f.now
        f.advance(seconds: 29.99)
        // The ping reaches the server's socket, but the loop does not run to read it
        // before the heartbeat deadline fires: a stalled server.
        let ping = alice.send("ping")
        _ = f.loop.clock.advance(to: loggedInAt.advanced(by: 30_000))
        f.settle()
        #expect(!alice.isClosed, "closed with \(alice.closeInfo.map { "\($0)" } ?? "-")")
        #expect(alice.reply(to: ping) != nil)
        // Silence after that still ends it, 30 s after the ping was read.
        f.advance(seconds: 30)
        #expect(alice.closeInfo?.received == 4002)
    }
}
