import ChatProtocol
import EventLoop
import Foundation
import MockChatCore
import MockChatServer
import WireKit

/// The server a scenario runs against: a fresh in-process one (the default) or an
/// external `mockchat serve --clock virtual` reached through its control API.
protocol ServerUnderTest: AnyObject {
    /// Where clients connect.
    var address: SocketAddress { get }
    /// A control API request; the reply's status and JSON body.
    func control(method: String, path: String, body: JSONValue) throws(ScenarioError) -> (status: Int, body: JSONValue)
    /// Moves the server's clock, and the clock of the harness's own loop, to `instant`:
    /// timers due by then fire in deadline order (the server's first at one instant),
    /// with `settle` after each. Callers never pass a deadline of the server or the loop.
    func moveClock(to instant: Instant, settle: () throws(ScenarioError) -> Void) throws(ScenarioError)
    /// The earliest timer of the server or of the harness's loop, as of the last settle.
    var nextDeadline: Instant? { get }
    /// The server's WebSocket sessions with what each sent and received (`POST
    /// /control/settle`); an external server also reports its next timer this way.
    func sessionCounts() throws(ScenarioError) -> [SocketCount]
    /// The server's trace since the scenario began, read back as the entries it wrote.
    func trace() throws(ScenarioError) -> [TraceLog.Entry]
    /// The server's clock reading, in seconds, when the scenario began.
    var traceOrigin: Double { get }
    /// Whether server and clients share the harness's loop, so that the loop's own
    /// settle sees everything in flight.
    var isInProcess: Bool { get }
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

    let isInProcess = true

    func control(method: String, path: String, body: JSONValue) throws(ScenarioError) -> (status: Int, body: JSONValue) {
        var bytes: [UInt8] = []
        if !body.isNull { body.serialize(into: &bytes) }
        let request = HTTPRequest(method: method, target: path, version: "HTTP/1.1", headers: [], body: bytes)
        let response = server.control(request)
        loop.settle()
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
    }

    func moveClock(to instant: Instant, settle: () throws(ScenarioError) -> Void) throws(ScenarioError) {
        var failure: ScenarioError?
        loop.clock.advance(to: instant) {
            guard failure == nil else { return }
            do throws(ScenarioError) { try settle() } catch { failure = error }
        }
        if let failure { throw failure }
    }

    var nextDeadline: Instant? { loop.clock.nextDeadline }

    func sessionCounts() throws(ScenarioError) -> [SocketCount] { server.sessionCounts }

    func trace() throws(ScenarioError) -> [TraceLog.Entry] {
        Array(server.trace.entries)
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
    /// The server's next timer, as of its last settle answer.
    private var remoteDeadline: Instant?
    /// Whether the server runs on the system clock (wall-clock runs).
    private let wallClock: Bool

    let isInProcess = false

    init(loop: EventLoop, url: String, wallClock: Bool = false) throws(ScenarioError) {
        self.wallClock = wallClock
        self.loop = loop
        guard let parsed = SocketAddress(server: url) else {
            throw ScenarioError("--server takes ws://HOST:PORT[/v1/ws] or HOST:PORT, got '\(url)'")
        }
        address = parsed
        let reset = try control(method: "POST", path: "/control/reset",
                                body: wallClock ? [:] : ["clock": .double(loop.clock.now.seconds)])
        guard reset.status == 200 else { throw ScenarioError("the server refused a reset: \(reset.body)") }
        // One settle answer gives where the trace stands and the clock, without reading
        // a trace that may hold the entries of every earlier scenario.
        let state = try settleState()
        traceStart = state["traceSeq"]?.intValue.map(Int.init) ?? 0
        remoteNow = try Self.instant(state["now"], "now")
        traceOrigin = remoteNow.seconds
    }

    /// An instant in a settle answer of the server under test (Unix seconds), checked
    /// before it is converted: a server that answers 1e308 is named, not a crash.
    private static func instant(_ value: JSONValue?, _ field: String) throws(ScenarioError) -> Instant {
        do throws(BoundedNumberError) {
            return try BoundedNumber.instant(seconds: value?.doubleValue ?? 0, "the server's '\(field)'")
        } catch {
            throw ScenarioError("POST /control/settle: \(error)")
        }
    }

    func control(method: String, path: String, body: JSONValue) throws(ScenarioError) -> (status: Int, body: JSONValue) {
        let (status, bytes) = try exchange(method: method, path: path, body: body)
        return (status, (try? JSONParser.parse(bytes)) ?? .null)
    }

    func moveClock(to instant: Instant, settle: () throws(ScenarioError) -> Void) throws(ScenarioError) {
        // The local clock reaches the instant first without firing, so that what the
        // server does then is seen at the right time; then the server's timers fire,
        // then the local ones.
        loop.clock.move(to: instant)
        try advanceRemote(to: instant)
        try settle()
        var failure: ScenarioError?
        loop.clock.advance(to: instant) {
            guard failure == nil else { return }
            do throws(ScenarioError) { try settle() } catch { failure = error }
        }
        if let failure { throw failure }
    }

    var nextDeadline: Instant? {
        [loop.clock.nextDeadline, remoteDeadline].compactMap { $0 }.min()
    }

    func sessionCounts() throws(ScenarioError) -> [SocketCount] {
        let state = try settleState()
        remoteDeadline = state["nextDeadline"] == nil || state["nextDeadline"] == .null
            ? nil : try Self.instant(state["nextDeadline"], "nextDeadline")
        return (state["sockets"]?.arrayValue ?? []).map { socket in
            SocketCount(port: Int(socket["port"]?.intValue ?? 0), isOpen: socket["held"]?.boolValue != true,
                        sent: Int(socket["sent"]?.intValue ?? 0), received: Int(socket["received"]?.intValue ?? 0),
                        silent: socket["silent"]?.boolValue == true, receiving: socket["receiving"]?.boolValue == true,
                        held: socket["held"]?.boolValue == true)
        }
    }

    /// `POST /control/settle`.
    private func settleState() throws(ScenarioError) -> JSONValue {
        let reply = try control(method: "POST", path: "/control/settle", body: [:])
        guard reply.status == 200, reply.body["sockets"]?.arrayValue != nil else {
            throw ScenarioError("the server cannot settle (HTTP \(reply.status)): \(reply.body)")
        }
        return reply.body
    }

    private func advanceRemote(to instant: Instant) throws(ScenarioError) {
        let milliseconds = instant.milliseconds - remoteNow.milliseconds
        guard milliseconds > 0 else { return }
        let reply = try control(method: "POST", path: "/control/clock/advance", body: ["ms": .integer(milliseconds)])
        guard reply.status == 200 else { throw ScenarioError("the server cannot advance its clock: \(reply.body)") }
        remoteNow = instant
    }

    /// The remote trace since the scenario began, read page by page.
    func trace() throws(ScenarioError) -> [TraceLog.Entry] {
        let pageSize = 2_000
        var lines: [TraceLog.Entry] = []
        var since = traceStart
        while true {
            let (status, bytes) = try exchange(method: "GET", path: "/control/trace?since=\(since)&limit=\(pageSize)", body: .null)
            guard status == 200 else { throw ScenarioError("cannot read the server's trace (HTTP \(status))") }
            var page: [TraceLog.Entry] = []
            for (index, line) in bytes.split(separator: 10).enumerated() {
                do {
                    page.append(try TraceLog.Entry(json: try JSONParser.parse(Array(line))))
                } catch {
                    throw ScenarioError("the server's trace after seq \(since), line \(index + 1): \(error)")
                }
            }
            lines += page
            guard page.count == pageSize, let last = page.last?.sequence else { return lines }
            since = last
        }
    }

    /// One control API request over a fresh connection, answered within 10 s.
    private func exchange(method: String, path: String, body: JSONValue) throws(ScenarioError) -> (Int, [UInt8]) {
        var payload: [UInt8] = []
        if !body.isNull { body.serialize(into: &payload) }
        let request = ControlRequest(method: method, path: path, host: address.description, body: payload)
        var outcome: Result<HTTPReply, HTTPExchange.Failure>?
        HTTPExchange.send(request, on: loop, to: address) { outcome = $0 }
        guard loop.run(timeout: 10, until: { outcome != nil }) else { throw ScenarioError("the control API did not answer \(path)") }
        switch outcome {
        case .success(let reply)?: return (reply.status, reply.body)
        case .failure(.connect(let error))?: throw ScenarioError("cannot reach \(address): \(error)")
        case .failure(let failure)?: throw ScenarioError("\(failure) to \(path)")
        case nil: throw ScenarioError("the control API did not answer \(path)")
        }
    }
}
