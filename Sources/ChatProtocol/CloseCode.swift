/// WebSocket close codes sent by the server.
///
/// 1000-1011 are RFC 6455 section 7.4.1; 4000-4999 are reserved for applications
/// (section 7.4.2) and carry this project's reasons.
public enum CloseCode: UInt16, Sendable, CaseIterable {
    /// 1000: the client logged out.
    case normal = 1000
    /// 1001: the server is shutting down.
    case goingAway = 1001
    /// 1002: a frame broke RFC 6455 (sent by wslay).
    case protocolError = 1002
    /// 1007: a text message was not UTF-8 (sent by wslay).
    case invalidPayload = 1007
    /// 1008: the client broke a framing policy (too many fragments in one message).
    case policyViolation = 1008
    /// 1009: a message larger than the limit (sent by wslay).
    case messageTooBig = 1009
    /// 4001: another device of the same user took over (003, "Reconnection kick strategy").
    case deviceKicked = 4001
    /// 4002: nothing arrived from the client within the app's heartbeat timeout.
    case heartbeatTimeout = 4002
    /// 4003: login failed (unknown uid, bad key or token, deactivated user).
    case loginFailed = 4003
    /// 4004: a reconnecting device was refused because another mobile device is online.
    case reconnectRefused = 4004
    /// 4008: the client stopped reading and its outbound queue overflowed.
    case slowConsumer = 4008
    /// 4009: the control API closed the connection.
    case closedByControl = 4009
    /// 4010: the connection did not log in within the app's login timeout.
    case loginTimeout = 4010

    /// A short name for logs and traces.
    public var name: String {
        switch self {
        case .normal: "normal"
        case .goingAway: "going-away"
        case .protocolError: "protocol-error"
        case .invalidPayload: "invalid-payload"
        case .policyViolation: "policy-violation"
        case .messageTooBig: "message-too-big"
        case .deviceKicked: "device-kicked"
        case .heartbeatTimeout: "heartbeat-timeout"
        case .loginFailed: "login-failed"
        case .reconnectRefused: "reconnect-refused"
        case .slowConsumer: "slow-consumer"
        case .closedByControl: "closed-by-control"
        case .loginTimeout: "login-timeout"
        }
    }
}
