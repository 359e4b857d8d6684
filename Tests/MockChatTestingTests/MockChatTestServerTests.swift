import Foundation
import MockChatTesting
import Testing
import WireKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What an SDK team's Swift tests look like with MockChatTesting: a server per test on a
/// free port, the SDK connecting to `server.url`, a fault, the trace checked. `TinySDK`
/// stands in for the SDK under test: a blocking WebSocket client on another thread.
@Suite struct MockChatTestServerTests {
    @Test func anSDKLogsInAndTheTraceShowsIt() throws {
        let server = try MockChatTestServer()
        defer { server.stop() }
        let sdk = try TinySDK(port: server.port)
        let reply = try sdk.send(#"{"id":1,"op":"login","uid":"alice","authKey":"mockchat-dev-key","deviceId":"p1","platform":"mobile"}"#)
        #expect(reply["id"] == 1 && reply["result"]?["user"]?["uid"] == "alice")
        #expect(try server.control("GET", "/control/presence")["online"] == ["alice"])
        let logins = try server.trace().filter { $0["kind"] == "in" && $0["frame"]?["op"] == "login" }
        #expect(logins.count == 1)
    }

    @Test func aFaultAndTheVirtualClockEndASilentSession() throws {
        let server = try MockChatTestServer(app: ["heartbeatTimeout": 20])
        defer { server.stop() }
        let sdk = try TinySDK(port: server.port)
        _ = try sdk.send(#"{"id":1,"op":"login","uid":"bob","authKey":"mockchat-dev-key","deviceId":"p1","platform":"mobile"}"#)
        try server.fault("blackhole", ["uid": "bob"])
        try server.advance(seconds: 21)
        let closes = try server.trace().filter { $0["kind"] == "close" && $0["code"] == 4002 }
        #expect(closes.count == 1, "the heartbeat (20 s, virtual) ends bob's session")
        #expect(try server.control("GET", "/control/presence")["online"] == [])
    }

    @Test func refusalsNameTheRouteAndStopIsFinal() throws {
        let server = try MockChatTestServer(clock: .system)
        #expect(try server.control("GET", "/control/health")["clock"] == "system")
        let refused = #expect(throws: MockChatTestServer.Failure.self) { try server.fault("teleport") }
        #expect(refused?.description.contains("POST /control/faults: HTTP 400") == true)
        server.stop()
        server.stop()
        #expect(throws: MockChatTestServer.Failure.self) { try server.reset() }
        #expect(throws: (any Error).self) { try TinySDK(port: server.port) }
    }
}

/// A blocking WebSocket client from WireKit's upgrade request and frame codec.
final class TinySDK {
    private let socket: Int32
    private var reader = ServerFrameReader()
    private var encoder = ClientFrameEncoder(seed: 1)

    struct Failure: Error { let what: String }

    init(port: Int) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(socket); throw Failure(what: "connect: errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let upgrade = UpgradeRequest(host: "127.0.0.1:\(port)", key: UpgradeRequest.key(Array(repeating: 7, count: 16)))
        try write(upgrade.bytes)
        var head = HTTPResponseReader()
        while head.reply == nil { head.feed(try read()) }
        guard head.reply?.status == 101 else { throw Failure(what: "upgrade answered \(head.reply?.status ?? 0)") }
        reader.feed(head.remainder)
    }

    deinit { close(socket) }

    /// Sends one text frame and returns the next reply (a frame with an `id`).
    func send(_ text: String) throws -> JSONValue {
        var frame: [UInt8] = []
        encoder.appendText(Array(text.utf8), to: &frame)
        try write(frame)
        while true {
            for frame in reader.takeFrames() where frame.opcode == 1 {
                let message = try JSONParser.parse(frame.payload)
                if message["id"] != nil { return message }
            }
            reader.feed(try read())
        }
    }

    private func write(_ bytes: [UInt8]) throws {
        guard Glibc.send(socket, bytes, bytes.count, 0) == bytes.count else { throw Failure(what: "send") }
    }

    private func read() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(socket, &buffer, buffer.count, 0)
        guard count > 0 else { throw Failure(what: "the server closed the connection") }
        return Array(buffer[..<count])
    }
}
