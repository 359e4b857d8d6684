/// What `getConnectionStatus()` answers.
public enum ConnectionStatus: String, Sendable, Equatable, Codable {
    /// No live socket and nothing under way (also while waiting for the network).
    case disconnected
    /// A socket is being opened or logged in, or the next reconnection attempt is due.
    case connecting
    /// Logged in over a live socket.
    case connected
    /// Another device took over; nothing reconnects until the app calls `connect()` (or
    /// logs out and in again, or relaunches).
    case kicked
}
