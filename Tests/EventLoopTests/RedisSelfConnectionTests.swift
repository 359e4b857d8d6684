import Foundation
import Testing
@testable import EventLoop

/// A connection to a port nobody listens on can be joined to itself by the kernel (TCP's
/// simultaneous open), and then echoes every command as if Redis had answered with it.
/// Linux hands `connect(2)` even source ports first, so an even port in the ephemeral
/// range is the one at risk: a node retrying while its Redis restarts there.
@Suite(.serialized) struct RedisSelfConnectionTests {
    @Test func aSocketConnectedToItsOwnPortIsRecognised() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = Self.loopback(port: 0)
        #expect(Self.call(fd, &address, bind) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        #expect(Self.call(fd, &address, connect) == 0)
        #expect(RedisConnection.isJoinedToItself(fd))
    }

    @Test func aConnectionToAListenerIsNotJoinedToItself() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener); close(client) }
        var address = Self.loopback(port: 0)
        #expect(Self.call(listener, &address, bind) == 0 && listen(listener, 1) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        #expect(Self.call(client, &address, connect) == 0)
        #expect(!RedisConnection.isJoinedToItself(client))
    }

    /// Connects again and again to a free even port until the kernel joins a connection to
    /// itself (about one attempt in 14,000 here): that one fails with its reason, and no
    /// attempt ever reports itself connected.
    @Test func aConnectionJoinedToItselfFailsAndIsNeverConnected() throws {
        let loop = try EventLoop()
        defer { _ = loop.shutdown() }
        let port = try #require(Self.freeEvenPort())
        var attempts = 0
        var connects = 0
        var reasons: [String: Int] = [:]
        while attempts < 60_000, reasons.keys.allSatisfy({ !$0.hasPrefix("connected to itself") }) {
            attempts += 1
            guard let connection = try? RedisConnection(loop: loop, host: "127.0.0.1", port: port) else {
                reasons["refused at once", default: 0] += 1
                continue
            }
            var ended = false
            connection.onConnect = { connects += 1 }
            connection.onDisconnect = { reasons[$0, default: 0] += 1; ended = true }
            #expect(loop.run(timeout: 5) { ended || connects > 0 })
            if connects > 0 { break }
        }
        print("redis self-connection: \(attempts) attempts to port \(port), endings \(reasons)")
        #expect(connects == 0)
        #expect(reasons.keys.contains { $0.hasPrefix("connected to itself") }, "\(attempts) attempts")
        #expect(loop.settle())
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private static func call(_ fd: Int32, _ address: inout sockaddr_in,
                             _ function: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { function(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// An even port in the ephemeral range that a bind shows free.
    private static func freeEvenPort() -> Int? {
        for candidate in stride(from: 40_000, to: 60_000, by: 2) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = loopback(port: UInt16(candidate))
            if call(fd, &address, bind) == 0 { return candidate }
        }
        return nil
    }
}

/// A loop shut down while a Redis connection is still open closes it like its own handles.
@Suite struct RedisConnectionShutdownTests {
    @Test func aLoopShutDownWithAnOpenRedisConnectionClosesIt() throws {
        let loop = try EventLoop()
        var accepted: [TCPConnection] = []
        let listener = try TCPListener(loop: loop, address: SocketAddress(host: "127.0.0.1", port: 0)) { accepted.append($0) }
        let connection = try RedisConnection(loop: loop, host: "127.0.0.1", port: listener.address.port)
        var connected = false
        connection.onConnect = { connected = true }
        #expect(loop.run(timeout: 5) { connected && accepted.count == 1 })
        #expect(loop.shutdown() == 0)
        #expect(!connection.isOpen)
    }
}
