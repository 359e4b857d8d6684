import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import MockChatTestSupport
import Testing

@Suite struct ServerLifecycleTests {
    @Test func shutdownSends1001ToEveryClientAndLeavesNoHandleOpen() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let bob = try f.loggedIn("bob", device: "b", platform: .mobile)
        let anonymous = try f.connect()
        f.server.shutdown()
        f.settle()
        for client in [alice, bob, anonymous] {
            #expect(client.closeInfo?.received == CloseCode.goingAway.rawValue)
            #expect(client.closeInfo?.sent == CloseCode.goingAway.rawValue)
            #expect(client.closeInfo?.abnormal == nil)
            #expect(client.socket.connection.state == .closed)
        }
        #expect(f.server.sessionCount == 0)
        #expect(f.server.openConnectionCount == 0)
        #expect(f.server.engine.connections.isEmpty)
        #expect(f.server.engine.onlineUsers.isEmpty)
        // The listener is gone: nothing answers any more.
        guard case .failure(.connect(let error))? = f.tryConnect() else {
            Issue.record("the server still accepts connections")
            return
        }
        #expect(error.name == "ECONNREFUSED")
        #expect(f.loop.traffic.isSettled)
        #expect(f.loop.clock.pendingTimers == 0)
        #expect(f.shutdown() == 0)
    }

    @Test func embeddedFixturesEqualTheFilesOnDisk() throws {
        let folder = PackagePaths.root.appendingPathComponent("Fixtures").path
        let disk = try FixtureSet.load(folder: folder)
        let embedded = try FixtureSet.embedded()
        #expect(embedded.directory == disk.directory)
        #expect(embedded.settings == disk.settings)
        for (name, text) in [("users.json", EmbeddedFixtures.users), ("app.json", EmbeddedFixtures.app)] {
            let data = try #require(FileManager.default.contents(atPath: folder + "/" + name))
            #expect(try JSONParser.parse(text) == JSONParser.parse(Array(data)), "\(name)")
        }
        // The facts the other tests rely on.
        #expect(disk.directory.records.count == 14)
        #expect(disk.directory.hasBlocked("carol", "mallory"))
        #expect(disk.directory.record("oscar")?.deactivatedAt != 0)
        #expect(disk.settings.heartbeatTimeoutMilliseconds == 30_000)
        #expect(disk.settings.clientKickControl == false)
        #expect(disk.settings.mobileDevicesPerUser == 1)
    }
}

@Suite struct DeterminismTests {
    /// A small session touching logins, presence, queries, a refused login, a fault,
    /// a lost connection and a heartbeat timeout. Returns the trace as JSON lines.
    static func scriptedSession() throws -> [UInt8] {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "alice-laptop", presence: .friends)
        let bob = try f.loggedIn("bob", device: "bob-phone", platform: .mobile)
        f.advance(seconds: 2.5)
        _ = alice.request("ping")
        _ = bob.request("users.list", ["limit": 3])
        _ = bob.request("users.get", ["uid": "carol"])
        let intruder = try f.connect()
        _ = intruder.login(uid: "carol", device: "x", authKey: "wrong")
        alice.send(text: "not json")
        f.settle()
        _ = try f.control("POST", "/control/faults", body: #"{"fault":"delay","uid":"bob","ms":250}"#)
        _ = bob.request("ping")
        f.advance(seconds: 1)
        let phone2 = try f.connect()
        _ = phone2.login(uid: "bob", device: "bob-phone-2", platform: .mobile)
        f.advance(seconds: 1)
        _ = try f.control("POST", "/control/faults", body: #"{"fault":"drop","deviceId":"bob-phone-2"}"#)
        #expect(phone2.isClosed)
        f.advance(seconds: 40)
        #expect(alice.closeInfo?.received == 4002)
        let trace = TraceLog.jsonLines(f.server.trace.entries)
        #expect(f.shutdown() == 0)
        return trace
    }

    @Test func theSameSessionGivesAByteIdenticalTrace() throws {
        let first = try Self.scriptedSession()
        let second = try Self.scriptedSession()
        #expect(first.count > 1_000)
        let firstLines = String(decoding: first, as: UTF8.self).split(separator: "\n")
        let secondLines = String(decoding: second, as: UTF8.self).split(separator: "\n")
        #expect(firstLines.count == secondLines.count)
        for (index, (a, b)) in zip(firstLines, secondLines).enumerated() where a != b {
            Issue.record("line \(index + 1) differs:\n\(a)\n\(b)")
            break
        }
        let identical = first == second
        #expect(identical, "the traces differ")
        let kinds = Set(firstLines.compactMap { try? JSONParser.parse(String($0))["kind"]?.stringValue })
        #expect(kinds == ["open", "in", "out", "close", "fault", "control"])
    }
}
