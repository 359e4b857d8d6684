import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import Testing
import WireKit

/// A ChatServer on 127.0.0.1 (a free port) with the embedded fixtures, on a loop whose
/// clock is virtual. Server and clients share the loop and the test's thread: every
/// wait is `settle()` or `run(timeout:until:)`.
///
/// The loop is shut down when the fixture goes away, so a test that stops early never
/// leaves a loop behind; tests that check the shutdown status call ``shutdown()``.
public final class ServerFixture {
    public let loop: EventLoop
    public let server: ChatServer
    /// Seeds for WebSocket keys and masks: the same sequence in every run.
    private var nextSeed: UInt64 = 1

    /// Starts a server; `configure` may change the embedded app settings first.
    public init(access: ControlAccess = ControlAccess(), configure: (inout AppConfiguration) -> Void = { _ in },
         server serverSettings: (inout ChatServer.Configuration) -> Void = { _ in }, trace: TraceLog? = nil,
         clock: Clock.Mode = .virtual(start: .virtualEpoch)) throws {
        let loop = try EventLoop(clockMode: clock)
        do {
            server = try Self.startServer(on: loop, access: access, configure: configure, server: serverSettings,
                                          trace: trace)
        } catch {
            loop.shutdown()
            throw error
        }
        self.loop = loop
    }

    /// One more server on the fixture's loop (a free port, the embedded fixtures, the
    /// default settings): a second node for clients that spread over several servers.
    public func anotherServer(access: ControlAccess = ControlAccess()) throws -> ChatServer {
        try Self.startServer(on: loop, access: access)
    }

    private static func startServer(on loop: EventLoop, access: ControlAccess,
                                    configure: (inout AppConfiguration) -> Void = { _ in },
                                    server serverSettings: (inout ChatServer.Configuration) -> Void = { _ in },
                                    trace: TraceLog? = nil) throws -> ChatServer {
        let fixtures = try FixtureSet.embedded()
        var settings = fixtures.settings
        configure(&settings)
        var configuration = ChatServer.Configuration()
        configuration.address = SocketAddress(host: "127.0.0.1", port: 0)
        configuration.controlAccess = access
        serverSettings(&configuration)
        return try ChatServer(loop: loop, configuration: configuration, directory: fixtures.directory,
                              settings: settings, trace: trace)
    }

    deinit {
        loop.shutdown()
    }

    /// The virtual time.
    public var now: Instant { loop.clock.now }

    /// Closes every handle and returns `uv_loop_close`'s status.
    public func shutdown() -> Int32 { loop.shutdown() }

    /// Waits until all in-process traffic is delivered; records an issue if it never is.
    public func settle(sourceLocation: SourceLocation = #_sourceLocation) {
        if !loop.settle() { Issue.record("the loop did not settle", sourceLocation: sourceLocation) }
    }

    /// Moves virtual time forward, letting every timer firing settle before the next.
    public func advance(seconds: Double) {
        advance(milliseconds: Int64((seconds * 1000).rounded()))
    }

    public func advance(milliseconds: Int64) {
        let loop = self.loop
        loop.clock.advance(to: loop.clock.now.advanced(by: milliseconds)) { loop.settle() }
        settle()
    }

    /// Moves virtual time to `instant` (which must not be in the past).
    public func advance(to instant: Instant) {
        advance(milliseconds: instant.milliseconds - now.milliseconds)
    }

    // MARK: WebSocket clients

    /// Opens a WebSocket to the server, or reports why it could not.
    public func tryConnect(path: String = "/v1/ws") -> Result<WebSocket, WebSocketClient.Failure>? {
        var outcome: Result<WebSocket, WebSocketClient.Failure>?
        WebSocketClient.connect(on: loop, to: server.address, path: path, seed: nextSeed) { outcome = $0 }
        nextSeed += 1
        loop.run(timeout: 5) { outcome != nil }
        return outcome
    }

    /// Opens a WebSocket and waits until the server has attached it.
    public func connect() throws -> TestClient {
        guard let outcome = tryConnect() else { throw FixtureFailure("WebSocket connect timed out") }
        let client = TestClient(fixture: self, socket: try outcome.get())
        settle()
        return client
    }

    /// Connects and logs in; throws unless the login succeeded. The returned client's
    /// message log starts empty (the login reply is checked, then cleared).
    public func loggedIn(_ uid: String, device: String, platform: Platform = .desktop,
                  presence: PresenceSubscription = .allUsers) throws -> TestClient {
        let client = try connect()
        let reply = client.login(uid: uid, device: device, platform: platform, presence: presence)
        guard reply?.resultObject?["connectionId"] != nil else {
            throw FixtureFailure("login of \(uid) on \(device) failed: \(String(describing: reply))")
        }
        client.clear()
        return client
    }

    // MARK: Raw TCP

    /// Opens a plain TCP connection to the server.
    public func rawConnect() throws -> RawConnection {
        var outcome: Result<RawConnection, UVError>?
        RawConnection.connect(on: loop, to: server.address) { outcome = $0 }
        guard loop.run(timeout: 5, until: { outcome != nil }) else { throw FixtureFailure("TCP connect timed out") }
        return try outcome!.get()
    }

    /// Sends `bytes` on a fresh connection and collects everything until the server closes.
    public func rawExchange(_ bytes: [UInt8]) throws -> RawConnection {
        let raw = try rawConnect()
        raw.write(bytes)
        guard loop.run(timeout: 5, until: { raw.isClosed }) else {
            raw.connection.close()
            throw FixtureFailure("the server did not close the connection")
        }
        return raw
    }

    /// Sends an HTTP request made of `text` and parses the response.
    public func rawHTTP(_ text: String) throws -> HTTPReply {
        let raw = try rawExchange(Array(text.utf8))
        guard let reply = HTTPReply(raw.received) else {
            throw FixtureFailure("not an HTTP response: \(String(decoding: raw.received, as: UTF8.self))")
        }
        return reply
    }

    /// A request to the control API, sent the way every client in the package sends
    /// one (``ControlRequest`` over ``HTTPExchange``); the body, if any, with its length.
    public func control(_ method: String, _ path: String, body: String? = nil) throws -> HTTPReply {
        let request = ControlRequest(method: method, path: path, host: server.address.description,
                                     body: Array((body ?? "").utf8))
        var outcome: Result<HTTPReply, HTTPExchange.Failure>?
        HTTPExchange.send(request, on: loop, to: server.address) { outcome = $0 }
        guard loop.run(timeout: 5, until: { outcome != nil }), let outcome else {
            throw FixtureFailure("the control API did not answer \(method) \(path)")
        }
        let reply = try outcome.get()
        settle()
        return reply
    }
}
