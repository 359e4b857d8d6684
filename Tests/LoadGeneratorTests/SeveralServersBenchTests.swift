import ChatProtocol
import EventLoop
import Foundation
@testable import LoadGenerator
import MockChatServer
import MockChatTestSupport
import Testing

/// `bench ping` and `bench reconnect` given two servers: connection i goes to server
/// i mod 2, reconnect's users are loaded on both, and the report names both.
///
/// The servers share the bench's loop and the system clock. They are not one cluster,
/// so a reconnect storm over them cannot converge (no event crosses servers): that run
/// lasts its `timeout`, and only its logins are checked.
@Suite struct SeveralServersBenchTests {
    /// Two servers on one loop, and a target naming both (this process as both servers'
    /// process, so the CPU and memory sums have something to read).
    private func twoServers(secondAccess: ControlAccess = ControlAccess()) throws
        -> (fixture: ServerFixture, servers: [ChatServer], target: BenchTarget) {
        let fixture = try ServerFixture(clock: .system)
        let servers = [fixture.server, try fixture.anotherServer(access: secondAccess)]
        var target = BenchTarget(addresses: servers.map(\.address))
        target.serverPIDs = [getpid(), getpid()]
        target.showProgress = false
        return (fixture, servers, target)
    }

    private func sessionsOpened(_ server: ChatServer) -> Int {
        server.trace.entries.filter { $0.kind == .open }.count
    }

    @Test func pingSpreadsOverBothServersAndNamesThem() throws {
        let (fixture, servers, target) = try twoServers()
        var options = PingBench.Options()
        options.connections = 6
        options.rate = 0
        options.duration = 0.3
        options.warmup = 0.1
        let report = PingBench(loop: fixture.loop, target: target, options: options).run()

        #expect(report.completed)
        #expect(report.json["settings"]?["server"] == .string(target.addressList))
        #expect(report.json["results"]?["connected"] == .integer(6))
        #expect(servers.map(sessionsOpened) == [3, 3])
        #expect(report.json["host"]?["serverCPUSeconds"] != .null)
    }

    @Test func reconnectLoadsItsUsersOnBothServers() throws {
        let (fixture, servers, target) = try twoServers()
        var options = ReconnectBench.Options()
        options.users = 8
        options.timeout = 3
        let report = ReconnectBench(loop: fixture.loop, target: target, options: options).run()

        #expect(report.json["settings"]?["server"] == .string(target.addressList))
        #expect(report.json["results"]?["loggedIn"] == .integer(8))
        #expect(report.json["results"]?["failed"] == .integer(0))
        #expect(servers.map(sessionsOpened) == [4, 4])
        let peak = report.json["results"]?["serverPeakRSSBytes"]?.intValue
        let largestNode = report.json["results"]?["serverPeakNodeRSSBytes"]?.intValue
        #expect(peak != nil && largestNode != nil && peak! > largestNode!)
        #expect(report.json["results"]?["serverWrites"] != .null)
    }

    @Test func reconnectNamesTheServerThatRefusedItsUsersAndConnectsNowhere() throws {
        let (fixture, servers, target) = try twoServers(secondAccess: ControlAccess(token: "secret"))
        var options = ReconnectBench.Options()
        options.users = 8
        let report = ReconnectBench(loop: fixture.loop, target: target, options: options).run()

        #expect(!report.completed)
        #expect(report.notes.first?.hasPrefix("\(servers[1].address): POST /control/fixtures answered 401") == true)
        #expect(servers.map(sessionsOpened) == [0, 0])
    }
}
