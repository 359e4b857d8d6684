import ChatProtocol
import EventLoop

/// `--sdk-listen HOST:PORT`: waits for a driver to dial in over WebSocket (an SDK in a
/// simulator or on a device) and serves every scenario of the run over that connection.
/// A driver that dials again replaces the previous connection.
public final class DriverListener: DriverChannel, @unchecked Sendable {
    private let bridge: WebSocketBridge
    /// Only touched by the thread running the current scenario.
    public var hello: JSONValue?
    /// Where it listens (the bound port when 0 was asked for).
    public let address: SocketAddress

    /// Starts listening on `address`.
    public init(address: SocketAddress) throws(ScenarioError) {
        (bridge, self.address) = try WebSocketBridge.start { loop, bridge throws(ScenarioError) in
            do {
                let server = try WebServer(loop: loop, address: address) { _, isUpgrade, _ in
                    guard isUpgrade else {
                        return .respond(.json(status: 426, body: #"{"error":"drivers connect over WebSocket"}"#))
                    }
                    return .upgrade { socket in bridge.adopt(socket) }
                }
                bridge.keep(server)
                return server.address
            } catch {
                throw ScenarioError("cannot listen for drivers on \(address): \(error)")
            }
        }
    }

    public var inbox: DriverInbox { bridge.inbox }

    public var label: String { "connected at \(address)" }

    public var stderrTail: [String] { [] }

    public var outlivesScenarios: Bool { true }

    /// Waiting for a driver to dial in (again): two minutes.
    public var helloTimeout: Double? { 120 }

    public func send(_ message: JSONValue) -> Bool {
        var bytes: [UInt8] = []
        message.serialize(into: &bytes)
        return bridge.send(bytes)
    }

    /// The connection stays for the next scenario.
    public func finish() {}

    /// Cuts the connection; the driver must dial again.
    public func abandon() {
        bridge.drop()
        hello = nil
    }
}
