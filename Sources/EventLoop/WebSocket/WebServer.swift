/// An HTTP/1.1 front door on one port: each accepted connection sends one request,
/// which is either upgraded to a ``WebSocket`` or answered and closed.
///
/// Stages of a connection: reading the request head (bounded by ``HTTPLimits`` and by
/// the handshake deadline), then either a WebSocket or a single HTTP response. What to
/// do with a request is the owner's decision, made in ``route``.
public final class WebServer {
    /// Limits applied before any request reaches the owner.
    public struct Configuration: Sendable {
        public var limits = HTTPLimits()
        /// Time a client has to send a complete request, in milliseconds of clock time.
        public var handshakeTimeout: Int64 = 10_000
        /// Connections (in any stage) beyond which WebSocket upgrades get 503.
        public var maxConnections = 20_000
        /// Connections kept back above `maxConnections` for plain HTTP requests (the
        /// control API), so the server can still be inspected and reset at the cap.
        /// Beyond both, every new connection gets 503 at once.
        public var reservedConnections = 32
        public var webSocket = WebSocket.Configuration()
        public init() {}
    }

    /// What to do with a request.
    public enum Routing {
        /// Complete the upgrade and hand the socket over.
        case upgrade((WebSocket) -> Void)
        /// Answer with this response and close.
        case respond(HTTPResponse)
        /// Reset the TCP connection without an answer, as an unreachable server would.
        case drop
        /// Write this response's status line and headers (no `Content-Length`: the body
        /// ends with the stream) and hand the connection over to write the body as it
        /// comes. The owner closes the connection; the peer closing ends it too.
        case stream(HTTPResponse, (TCPConnection) -> Void)
        /// Answer nothing for now, as a server behind a lost network path: the
        /// connection goes silent (``TCPConnection/silence()``) and the owner gets a
        /// ``HeldRequest`` to route it again later, or to reset it.
        case hold((HeldRequest) -> Void)
    }

    /// A request left unanswered by ``Routing/hold(_:)``.
    public struct HeldRequest {
        /// Routes the request again and then ends the silence, so that what the peer
        /// did meanwhile (gave up, reset) follows the answer.
        public let reroute: () -> Void
        /// Resets the connection without an answer.
        public let reset: () -> Void
        /// Sets the connection's latency (``TCPConnection/latencyMs``), before the answer.
        public let setLatency: (Int64?) -> Void
        /// The client's TCP port, which its side of a settle names (0 when unknown).
        public let peerPort: Int
        /// Whether the client has given up: its end of stream or reset came while held
        /// (or the connection is gone). Its port may then be reused by another socket.
        public let peerGone: () -> Bool
    }

    public let loop: EventLoop
    public let configuration: Configuration
    private var listener: TCPListener?
    /// Chooses what to do with each complete request; `isUpgrade` tells whether it
    /// was a valid WebSocket handshake.
    public var route: (_ request: HTTPRequest, _ isUpgrade: Bool, _ peer: SocketAddress?) -> Routing
    /// Connections accepted and not yet closed, in any stage.
    public private(set) var openConnections = 0

    /// Starts listening on `address`.
    public init(loop: EventLoop, address: SocketAddress, configuration: Configuration = .init(),
                route: @escaping (HTTPRequest, Bool, SocketAddress?) -> Routing) throws(UVError) {
        self.loop = loop
        self.configuration = configuration
        self.route = route
        listener = try TCPListener(loop: loop, address: address) { [unowned self] connection in
            self.accept(connection)
        }
    }

    /// The bound address.
    public var address: SocketAddress { listener!.address }

    /// Stops accepting; open connections are left to their owners.
    public func stopListening() {
        listener?.close()
    }

    private func accept(_ connection: TCPConnection) {
        openConnections += 1
        if openConnections > configuration.maxConnections + configuration.reservedConnections {
            // Answered and closed before the next accept: a burst at the cap never
            // holds more than one descriptor at a time.
            connection.onClosed = { [weak self] in self?.openConnections -= 1 }
            refuseAtCapacity(connection, closingAtOnce: true)
            return
        }
        var parser = HTTPRequestParser(limits: configuration.limits)
        // The timer holds the connection, and the connection's close cancels the timer:
        // a weak reference would give every connection a side table, which makes each
        // of its retains and releases take the slow path for as long as it lives.
        let deadline = loop.clock.schedule(after: configuration.handshakeTimeout) { connection.close() }
        connection.onClosed = { [weak self] in
            guard let self else { return }
            self.openConnections -= 1
            self.loop.clock.cancel(deadline)
        }
        connection.onEnd = { [unowned connection] _ in connection.close() }
        connection.onRead = { [unowned self, unowned connection] bytes in
            switch parser.feed(bytes) {
            case .needMore:
                return
            case .failure(let response):
                self.loop.clock.cancel(deadline)
                self.reply(response, on: connection)
            case .request(let request, let remainder):
                self.loop.clock.cancel(deadline)
                self.handle(request, remainder: remainder, on: connection)
            }
        }
    }

    private func handle(_ request: HTTPRequest, remainder: [UInt8], on connection: TCPConnection) {
        connection.onRead = nil
        let switching: HTTPResponse?
        switch WebSocketHandshake.evaluate(request, limits: configuration.limits) {
        case .reject(let response):
            reply(response, on: connection)
            return
        case .notUpgrade: switching = nil
        case .accept(let response): switching = response
        }
        if switching != nil, openConnections > configuration.maxConnections {
            refuseAtCapacity(connection, closingAtOnce: false)
            return
        }
        switch route(request, switching != nil, connection.remoteAddress) {
        case .respond(let response):
            reply(response, on: connection)
        case .drop:
            connection.reset()
        case .hold(let park):
            requestsHeld += 1
            connection.silence()
            park(HeldRequest(reroute: { [weak self, weak connection] in
                guard let self, let connection, connection.state == .open else { return }
                let parked = self.requestsHeld
                self.handle(request, remainder: remainder, on: connection)
                // Held again: the silence goes on.
                if self.requestsHeld == parked { connection.endSilence(release: true) }
            }, reset: { [weak connection] in
                connection?.endSilence(release: false)
                connection?.reset()
            }, setLatency: { [weak connection] ms in connection?.latencyMs = ms },
            peerPort: connection.remoteAddress?.port ?? 0,
            peerGone: { [weak connection] in connection.map { $0.state != .open || $0.peerEndedWhileSilent } ?? true }))
        case .stream(let head, let attach):
            connection.write(head.serializedHead())
            attach(connection)
        case .upgrade(let attach):
            guard let switching else {
                reply(.rejection(status: 426, "this endpoint speaks WebSocket only\n"), on: connection)
                return
            }
            connection.write(switching.serialized())
            let onClosed = connection.onClosed
            let socket = WebSocket(connection: connection, role: .server,
                                   configuration: configuration.webSocket)
            let socketClosed = connection.onClosed
            connection.onClosed = { onClosed?(); socketClosed?() }
            attach(socket)
            if !remainder.isEmpty { remainder.withUnsafeBytes { socket.feed($0) } }
        }
    }

    /// Requests routed to ``Routing/hold(_:)`` so far.
    public private(set) var requestsHeld = 0

    /// Times the server answered 503 because it was at its connection cap.
    public private(set) var refusedAtCapacity = 0
    /// Called (on the loop) each time a connection is refused at the cap.
    public var onCapacityRefusal: (() -> Void)?

    /// Counts a refusal at the cap and answers 503: written and closed at once on accept
    /// (`closingAtOnce`), or as any other reply once the upgrade request was read.
    private func refuseAtCapacity(_ connection: TCPConnection, closingAtOnce: Bool) {
        refusedAtCapacity += 1
        onCapacityRefusal?()
        if closingAtOnce {
            connection.writeAndCloseNow(Self.busy.serialized())
        } else {
            reply(Self.busy, on: connection)
        }
    }

    /// The answer at the cap: try again in a second.
    private static let busy: HTTPResponse = {
        var response = HTTPResponse.rejection(status: 503, "too many connections\n")
        response.headers.append((name: "Retry-After", value: "1"))
        return response
    }()

    private func reply(_ response: HTTPResponse, on connection: TCPConnection) {
        connection.onRead = nil
        var response = response
        if response.headerValues("Connection").isEmpty { response.headers.append((name: "Connection", value: "close")) }
        connection.write(response.serialized())
        connection.closeAfterWrites()
    }
}
