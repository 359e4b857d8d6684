@_exported import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import WireKit

/// A MockChat server inside the test process, for SDK tests written in Swift: it serves
/// real WebSockets on 127.0.0.1 and a free port from a thread of its own, so the SDK
/// under test connects to ``url`` as it would to `mockchat serve`, from any thread.
///
///     let server = try MockChatTestServer()            // virtual clock, built-in fixtures
///     defer { server.stop() }
///     let sdk = ChatSDK(url: server.url) ...
///     try server.fault("blackhole", ["uid": "bob"])
///     try server.advance(seconds: 30)
///     #expect(try server.trace().contains { $0["code"] == 4002 })
///
/// Every method may be called from any thread; they go through the control API
/// (docs/PROTOCOL.md, section 12), one request at a time.
public final class MockChatTestServer: @unchecked Sendable {
    /// Virtual: time stands still until ``advance(seconds:)``. System: real time.
    public enum ClockMode: Sendable { case virtual, system }

    /// A refused control request, or a server that could not start.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The port the server listens on.
    public let port: Int
    /// The chat endpoint, `ws://127.0.0.1:PORT/v1/ws`.
    public var url: String { "ws://127.0.0.1:\(port)/v1/ws" }

    private let address: SocketAddress
    private let stopper: LoopWaker
    private let stopped = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var isStopped = false
    /// The loop the control requests are made on, by whichever thread holds `lock`.
    private let controlLoop: EventLoop

    /// Starts a server. `fixtures` is a folder with users.json and app.json (default: the
    /// built-in fixtures); `app` settings are laid over them (`POST /control/fixtures`).
    public init(clock: ClockMode = .virtual, fixtures: String? = nil, app: JSONValue? = nil) throws {
        let fixtureSet = try fixtures.map { try FixtureSet.load(folder: $0) } ?? FixtureSet.embedded()
        let started = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<(SocketAddress, LoopWaker), Error>?
        let stopped = self.stopped
        let thread = Thread {
            let loop: EventLoop
            let server: ChatServer
            do {
                loop = try EventLoop(clockMode: clock == .virtual ? .virtual(start: .virtualEpoch) : .system)
            } catch {
                outcome = .failure(error)
                started.signal()
                stopped.signal()
                return
            }
            do {
                var configuration = ChatServer.Configuration()
                configuration.address = SocketAddress(host: "127.0.0.1", port: 0)
                server = try ChatServer(loop: loop, configuration: configuration, directory: fixtureSet.directory,
                                        settings: fixtureSet.settings, trace: TraceLog())
            } catch {
                // No listener (descriptors ran out): the loop is closed, not released open.
                _ = loop.shutdown()
                outcome = .failure(error)
                started.signal()
                stopped.signal()
                return
            }
            let stopper = LoopWaker(loop: loop) {
                server.shutdown()
                loop.stop()
            }
            outcome = .success((server.address, stopper))
            started.signal()
            loop.run()
            stopper.close()
            _ = loop.run(timeout: 1) { server.openConnectionCount == 0 }
            _ = loop.shutdown()
            stopped.signal()
        }
        thread.name = "MockChatTestServer"
        thread.start()
        started.wait()
        let (address, stopper) = try outcome!.get()
        self.address = address
        self.stopper = stopper
        port = address.port
        controlLoop = try EventLoop(clockMode: .system)
        if let app { _ = try control("POST", "/control/fixtures", ["app": app]) }
    }

    deinit {
        stop()
        _ = controlLoop.shutdown()
    }

    /// Closes every session with 1001 and ends the server's thread; waits for it.
    /// Calling it again does nothing.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !isStopped else { return }
        isStopped = true
        stopper.wake()
        stopped.wait()
    }

    // MARK: The control API

    /// Moves the virtual clock and fires the timers that come due.
    @discardableResult
    public func advance(seconds: Double) throws -> JSONValue {
        try control("POST", "/control/clock/advance", ["seconds": .double(seconds)])
    }

    /// Sets (or with `"enabled": false` clears) one fault: `fault("drop", ["uid": "bob"])`.
    @discardableResult
    public func fault(_ name: String, _ fields: JSONObject = [:]) throws -> JSONValue {
        var body = fields
        body["fault"] = .string(name)
        return try control("POST", "/control/faults", .object(body))
    }

    public func clearFaults() throws { _ = try control("DELETE", "/control/faults") }

    /// Back to the starting fixtures, every session closed with 4009, faults cleared.
    public func reset() throws { _ = try control("POST", "/control/reset") }

    /// Every trace entry the server keeps, read page by page.
    public func trace() throws -> [JSONValue] {
        var entries: [JSONValue] = []
        while true {
            let since = entries.last?["seq"]?.intValue ?? 0
            let page = try exchange("GET", "/control/trace?since=\(since)&limit=2000", nil)
                .split(separator: 10).map { try JSONParser.parse(Array($0)) }
            entries += page
            if page.count < 2000 { return entries }
        }
    }

    /// Any control request: its JSON reply, or ``Failure`` naming the route and the
    /// server's refusal.
    @discardableResult
    public func control(_ method: String, _ path: String, _ body: JSONValue = [:]) throws -> JSONValue {
        try JSONParser.parse(try exchange(method, path, body))
    }

    private func exchange(_ method: String, _ path: String, _ body: JSONValue?) throws -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        guard !isStopped else { throw Failure(description: "\(method) \(path): the server is stopped") }
        var payload: [UInt8] = []
        body?.serialize(into: &payload)
        let request = ControlRequest(method: method, path: path, host: "127.0.0.1:\(port)", body: payload)
        var outcome: Result<HTTPReply, HTTPExchange.Failure>?
        HTTPExchange.send(request, on: controlLoop, to: address) { outcome = $0 }
        guard controlLoop.run(timeout: 10, until: { outcome != nil }), let outcome else {
            throw Failure(description: "\(method) \(path): no answer within 10 s")
        }
        let reply: HTTPReply
        do { reply = try outcome.get() } catch { throw Failure(description: "\(method) \(path): \(error)") }
        guard reply.status == 200 else {
            let message = (try? JSONParser.parse(reply.body))?["error"]?.stringValue ?? reply.text
            throw Failure(description: "\(method) \(path): HTTP \(reply.status): \(message)")
        }
        return reply.body
    }
}
