import ChatProtocol

/// One way of reaching a driver process (docs/DRIVER.md, "Transports").
public protocol DriverChannel: AnyObject {
    /// Names the driver in messages: its command, or where it connected from.
    var label: String { get }
    /// Messages and the end of the connection, as they arrive.
    var inbox: DriverInbox { get }
    /// Whether one connection serves many scenarios (a WebSocket), so that what is left
    /// in the inbox when a scenario starts belongs to an earlier one.
    var outlivesScenarios: Bool { get }
    /// The driver's `hello`, once received (kept across scenarios on a WebSocket).
    var hello: JSONValue? { get set }
    /// Writes one message; false when the driver can no longer be reached.
    func send(_ message: JSONValue) -> Bool
    /// Wall-clock seconds to wait for a `hello` when none has come yet (nil: the reply
    /// deadline, at least 10 s). A device may take a while to dial in.
    var helloTimeout: Double? { get }
    /// The last lines the driver wrote to stderr (empty when not available).
    var stderrTail: [String] { get }
    /// The scenario is over: lets the driver end (stdio: closes its stdin).
    func finish()
    /// Stops a driver that misbehaved (stdio: kills its process group).
    func abandon()
}
