import ChatProtocol
import EventLoop
import Foundation
import MockChatServer

/// The server a scenario runs against: a fresh in-process one (the default) or an
/// external `mockchat serve --clock virtual` reached through its control API.
protocol ServerUnderTest: AnyObject {
    /// Where clients connect.
    var address: SocketAddress { get }
    /// A control API request; the reply's status and JSON body.
    func control(method: String, path: String, body: JSONValue) throws(ScenarioError) -> (status: Int, body: JSONValue)
    /// Moves time forward on the server and on the clients' loop together.
    func advance(milliseconds: Int64) throws(ScenarioError)
    /// The server's trace since the scenario began, one JSON object per entry.
    func trace() throws(ScenarioError) -> [JSONValue]
    /// Waits until the effects of the last step have arrived.
    func settle()
    /// The server's clock reading, in seconds, when the scenario began.
    var traceOrigin: Double { get }
}

/// A ``ChatServer`` on the scenario's own loop: one clock, one thread, and
/// ``EventLoop/settle(timeout:)`` after every timer, hence reproducible traces.
final class InProcessServer: ServerUnderTest {
    let loop: EventLoop
    let server: ChatServer

    init(loop: EventLoop, fixtures: FixtureSet) throws {
        self.loop = loop
        traceOrigin = loop.clock.now.seconds
        var configuration = ChatServer.Configuration()
        configuration.address = SocketAddress(host: "127.0.0.1", port: 0)
        server = try ChatServer(loop: loop, configuration: configuration, directory: fixtures.directory,
                                settings: fixtures.settings)
    }

    var address: SocketAddress { server.address }

    let traceOrigin: Double

    func settle() { loop.settle() }

    func control(method: String, path: String, body: JSONValue) throws(ScenarioError) -> (status: Int, body: JSONValue) {
        var bytes: [UInt8] = []
        if !body.isNull { body.serialize(into: &bytes) }
        let request = HTTPRequest(method: method, target: path, version: "HTTP/1.1", headers: [], body: bytes)
        let response = server.control(request)
        settle()
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
    }

    func advance(milliseconds: Int64) throws(ScenarioError) {
        let target = loop.clock.now.advanced(by: milliseconds)
        loop.clock.advance(to: target) { settle() }
        settle()
    }

    func trace() throws(ScenarioError) -> [JSONValue] {
        server.trace.entries.map(\.json)
    }
}

/// An external server with a virtual clock, driven over HTTP. Clients run on the
/// local loop; each advance moves the remote clock, then the local one.
final class RemoteServer: ServerUnderTest {
    let loop: EventLoop
    let address: SocketAddress
    private var traceStart = 0
    private(set) var traceOrigin = 0.0
    /// The server's virtual time, which this runner alone moves.
    private var remoteNow = Instant(milliseconds: 0)

    init(loop: EventLoop, url: String) throws(ScenarioError) {
        self.loop = loop
        guard let parsed = SocketAddress(server: url) else {
            throw ScenarioError("--server takes ws://HOST:PORT[/v1/ws] or HOST:PORT, got '\(url)'")
        }
        address = parsed
        let reset = try control(method: "POST", path: "/control/reset",
                                body: ["clock": .double(loop.clock.now.seconds)])
        guard reset.status == 200 else { throw ScenarioError("the server refused a reset: \(reset.body)") }
        traceStart = try trace().last?["seq"]?.intValue.map(Int.init) ?? 0
        traceOrigin = try control(method: "GET", path: "/control/clock", body: .null).body["now"]?.doubleValue ?? 0
        remoteNow = Instant(seconds: traceOrigin)
    }

    func settle() { loop.quiesce() }

    func control(method: String, path: String, body: JSONValue) throws(ScenarioError) -> (status: Int, body: JSONValue) {
        let (status, bytes) = try exchange(method: method, path: path, body: body)
        return (status, (try? JSONParser.parse(bytes)) ?? .null)
    }

    func advance(milliseconds: Int64) throws(ScenarioError) {
        // Lockstep: the server's clock is moved to each local deadline before the local
        // timers due then fire, so that both sides see time pass in the same order.
        let target = loop.clock.now.advanced(by: milliseconds)
        settle()
        while let deadline = loop.clock.nextDeadline, deadline <= target {
            loop.clock.move(to: deadline)
            try advanceRemote(to: deadline)
            loop.clock.advance(to: deadline) { settle() }
        }
        loop.clock.move(to: target)
        try advanceRemote(to: target)
        settle()
    }

    private func advanceRemote(to instant: Instant) throws(ScenarioError) {
        let milliseconds = instant.milliseconds - remoteNow.milliseconds
        guard milliseconds > 0 else { return }
        let reply = try control(method: "POST", path: "/control/clock/advance", body: ["ms": .integer(milliseconds)])
        guard reply.status == 200 else { throw ScenarioError("the server cannot advance its clock: \(reply.body)") }
        remoteNow = instant
    }

    func trace() throws(ScenarioError) -> [JSONValue] {
        let (status, bytes) = try exchange(method: "GET", path: "/control/trace?since=\(traceStart)", body: .null)
        guard status == 200 else { throw ScenarioError("cannot read the server's trace (HTTP \(status))") }
        return bytes.split(separator: 10).compactMap { try? JSONParser.parse(Array($0)) }
    }

    /// One HTTP/1.1 request over a fresh connection, read until the server closes.
    private func exchange(method: String, path: String, body: JSONValue) throws(ScenarioError) -> (Int, [UInt8]) {
        var payload: [UInt8] = []
        if !body.isNull { body.serialize(into: &payload) }
        let head = "\(method) \(path) HTTP/1.1\r\nHost: \(address)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(payload.count)\r\nConnection: close\r\n\r\n"
        var received: [UInt8] = []
        var done = false
        var failure: String?
        TCPConnection.connect(on: loop, to: address) { result in
            switch result {
            case .failure(let error):
                failure = "cannot reach \(self.address): \(error)"
                done = true
            case .success(let connection):
                connection.onRead = { received.append(contentsOf: $0) }
                connection.onEnd = { _ in connection.close(); done = true }
                connection.write(Array(head.utf8) + payload)
            }
        }
        guard loop.run(timeout: 10, until: { done }) else { throw ScenarioError("the control API did not answer \(path)") }
        if let failure { throw ScenarioError(failure) }
        guard let end = received.firstRange(of: [13, 10, 13, 10]) else { throw ScenarioError("malformed control reply") }
        let statusLine = String(decoding: received[..<end.lowerBound], as: UTF8.self).split(separator: " ")
        let status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        return (status, Array(received[end.upperBound...]))
    }
}
