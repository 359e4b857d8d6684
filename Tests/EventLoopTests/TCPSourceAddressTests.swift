import Testing
@testable import EventLoop

/// Connections from a chosen source address, as a load generator opens them.
@Suite struct TCPSourceAddressTests {
    @Test func connectionsLeaveFromTheSourceAddressOnPortsTheKernelPicks() throws {
        let loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
        let server = try WebServer(loop: loop, address: SocketAddress(host: "127.0.0.1", port: 0)) { _, _, _ in
            .respond(.text(status: 404, "no\n"))
        }
        var connections: [TCPConnection] = []
        for _ in 0..<2 {
            TCPConnection.connect(on: loop, to: server.address, from: SocketAddress(host: "127.0.0.2", port: 0)) {
                if case .success(let connection) = $0 { connections.append(connection) }
            }
        }
        #expect(loop.run(timeout: 5) { connections.count == 2 })
        #expect(connections.map { $0.localAddress?.host } == ["127.0.0.2", "127.0.0.2"])
        let ports = connections.compactMap { $0.localAddress?.port }
        #expect(ports.count == 2 && !ports.contains(0) && ports[0] != ports[1])
        connections.forEach { $0.close() }
        #expect(loop.settle())
        #expect(loop.shutdown() == 0)
    }
}
