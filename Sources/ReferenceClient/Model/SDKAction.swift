import ChatProtocol

/// What the state machine asks its driver to do. The driver executes each in order.
public enum SDKAction: Sendable, Equatable {
    /// Open a WebSocket to the server; answer with `socketOpened` or `socketFailed`.
    case openSocket
    /// Send one request frame on the open socket.
    case send(RequestID, Request)
    /// End the socket gracefully with this close code; its later events are not wanted.
    case closeSocket(CloseCode)
    /// End the socket abruptly, as a lost network or killed process would; its later
    /// events are not wanted.
    case dropSocket
    /// Arm the timer of this kind, replacing one already armed.
    case scheduleTimer(TimerKind, afterMilliseconds: Int64)
    /// Disarm the timer of this kind.
    case cancelTimer(TimerKind)
    /// Deliver the outcome of an API call.
    case completeCall(CallID, CallResult)
    /// Tell the connection listeners (possibly none) about a connection change.
    case connectionEvent(listeners: [String], ConnectionEvent)
    /// Tell these user listeners that a user came online or went offline.
    case userEvent(listeners: [String], PresenceChange, User)
}

/// The SDK's timers. One of each kind at most.
public enum TimerKind: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    /// The wait before the next reconnection attempt.
    case backoff
    /// The wait before the next heartbeat ping.
    case keepAlive
    /// The deadline for the reply to a heartbeat ping, a login or a logout.
    case pongTimeout
    /// The deadline for the answer to an attempt's WebSocket upgrade.
    case openTimeout
    /// The deadline for the reply to the oldest unanswered getUser(), fetchNext() or ping().
    case callTimeout
    /// The background task window (002) or the background disconnect delay (003).
    case backgroundWindow
}

/// What connection listeners hear (CometChat's `CometChatConnectionDelegate`).
public enum ConnectionEvent: Sendable, Equatable {
    /// `connecting()`: an attempt or a reconnection loop started.
    case connecting
    /// `connected()`: logged in over a live socket.
    case connected
    /// `disconnected()`: no live socket and no attempt under way.
    case disconnected
    /// Another device took over this user (003, "Reconnection kick strategy").
    case kicked(reason: String)
    /// `onConnectionError(error:)`: the server refused the connection; the reconnection
    /// loop ends (003, tip under "Automatic reconnection").
    case error(ChatError)

    /// The event's name in scenarios and the driver protocol: `connecting`, `connected`,
    /// `disconnected`, `kicked` or `error`.
    public var name: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .disconnected: "disconnected"
        case .kicked: "kicked"
        case .error: "error"
        }
    }
}

/// A presence change from the server (004, onUserOnline / onUserOffline).
public enum PresenceChange: String, Sendable, Equatable, Codable {
    case online
    case offline
}
