import ChatProtocol
import MockChatCore

/// The timings and policies of one documented SDK, loaded from `Fixtures/profiles/*.yaml`.
///
/// A profile is data: the state machine reads every duration and policy from here and
/// holds no numbers of its own. Each field has an entry in ``sources`` naming the
/// document section it comes from, or "project choice: <why>" when the documents leave
/// the value open; ``Profile/problems`` checks that nothing is left unsourced.
///
/// Durations are seconds, as written in the documents.
public struct Profile: Codable, Sendable, Equatable {
    /// The profile's name, e.g. `cometchat-ios`; the file is `<name>.yaml`.
    public var name: String
    /// The connection mode when `AppSettings` does not choose one: `true` is auto mode.
    public var defaultAutoMode: Bool
    /// What auto mode does with the socket when the app enters the background and no
    /// background services were configured.
    public var backgroundWithoutServices: BackgroundPolicy
    /// Seconds in the background before the SDK disconnects, for ``BackgroundPolicy/disconnectAfterDelay``.
    public var backgroundDisconnectAfter: Double?
    /// Seconds a configured background task keeps the socket after `didBackground`;
    /// `nil` when the SDK offers no background services.
    public var backgroundTaskWindow: Double?
    /// Whether `ping()` works in auto mode.
    public var pingAvailableInAutoMode: Bool
    /// Seconds between the SDK's own heartbeat pings while it keeps the socket alive.
    public var keepAliveInterval: Double
    /// Seconds the SDK waits for a reply to a heartbeat ping (or to a logout) before it
    /// considers the connection dead.
    public var pongTimeout: Double
    /// Seconds an attempt waits for the server's answer to its login before it counts as failed.
    public var loginReplyTimeout: Double
    /// Seconds an attempt waits for the answer to its WebSocket upgrade before it is abandoned.
    public var openTimeout: Double
    /// Seconds a closing socket waits for the server's close frame before the SDK ends the
    /// connection itself; once the closing handshake is complete it ends it at once.
    public var closeTimeout: Double = 5
    /// Seconds getUser(), fetchNext() and ping() wait for their reply before they fail.
    public var callTimeout: Double = 10
    /// Delays between reconnection attempts.
    public var reconnectBackoff: ReconnectBackoff
    /// Whether returning to the foreground restarts the backoff schedule.
    public var resetBackoffOnForeground: Bool
    /// Whether a change of network condition restarts the backoff schedule.
    public var resetBackoffOnNetworkChange: Bool
    /// Whether a login that cannot reach the server keeps retrying on the backoff
    /// schedule (`true`) or fails at once with the transport error (`false`).
    public var retryLoginUntilAnswered: Bool
    /// `reconnectKickEnable` when `AppSettings` does not set it.
    public var defaultReconnectKickEnable: Bool
    /// The close codes the SDK sends when the background ends the socket, on logout and on
    /// disconnect (each one of ``CloseCode``).
    public var backgroundCloseCode = CloseCode.goingAway.rawValue
    public var logoutCloseCode = CloseCode.normal.rawValue
    public var disconnectCloseCode = CloseCode.normal.rawValue
    /// The code and text of a call made before `initialize`.
    public var notInitializedError = "ERR_NOT_INITIALIZED"
    public var notInitializedDescription = "initialize() has not been called"
    /// The code of a second login while a user is logged in.
    public var alreadyLoggedInError = ErrorCode.alreadyLoggedIn.rawValue
    /// The texts of ERROR_WEBSOCKETS_ALLREADY_IN_CONNECTED_STATE and ERROR_PING_NOT_AVAILABLE.
    public var alreadyConnectedDescription = ErrorCode.alreadyConnected.defaultDescription
    public var pingNotAvailableDescription = ErrorCode.pingNotAvailable.defaultDescription
    /// Field name → where its value comes from.
    public var sources: [String: String]

    /// What auto mode does when the app goes to the background without background services.
    public enum BackgroundPolicy: String, Codable, Sendable, Equatable, ProfileChoice {
        /// Close the socket as soon as the app is in the background.
        case disconnectAtOnce
        /// Keep the socket for ``Profile/backgroundDisconnectAfter`` seconds, then close it.
        case disconnectAfterDelay

        public init(from decoder: any Decoder) throws { self = try Self.decode(from: decoder) }
    }

    public init(name: String, defaultAutoMode: Bool, backgroundWithoutServices: BackgroundPolicy,
                backgroundDisconnectAfter: Double?, backgroundTaskWindow: Double?,
                pingAvailableInAutoMode: Bool,
                keepAliveInterval: Double, pongTimeout: Double, loginReplyTimeout: Double, reconnectBackoff: ReconnectBackoff,
                resetBackoffOnForeground: Bool, resetBackoffOnNetworkChange: Bool,
                retryLoginUntilAnswered: Bool, defaultReconnectKickEnable: Bool,
                openTimeout: Double = 10, sources: [String: String]) {
        self.name = name
        self.defaultAutoMode = defaultAutoMode
        self.backgroundWithoutServices = backgroundWithoutServices
        self.backgroundDisconnectAfter = backgroundDisconnectAfter
        self.backgroundTaskWindow = backgroundTaskWindow
        self.pingAvailableInAutoMode = pingAvailableInAutoMode
        self.keepAliveInterval = keepAliveInterval
        self.pongTimeout = pongTimeout
        self.loginReplyTimeout = loginReplyTimeout
        self.openTimeout = openTimeout
        self.reconnectBackoff = reconnectBackoff
        self.resetBackoffOnForeground = resetBackoffOnForeground
        self.resetBackoffOnNetworkChange = resetBackoffOnNetworkChange
        self.retryLoginUntilAnswered = retryLoginUntilAnswered
        self.defaultReconnectKickEnable = defaultReconnectKickEnable
        self.sources = sources
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, defaultAutoMode, backgroundWithoutServices, backgroundDisconnectAfter
        case backgroundTaskWindow, pingAvailableInAutoMode
        case keepAliveInterval, pongTimeout, loginReplyTimeout, openTimeout, closeTimeout, callTimeout, reconnectBackoff, resetBackoffOnForeground
        case resetBackoffOnNetworkChange, retryLoginUntilAnswered, defaultReconnectKickEnable
        case backgroundCloseCode, logoutCloseCode, disconnectCloseCode
        case notInitializedError, notInitializedDescription, alreadyLoggedInError
        case alreadyConnectedDescription, pingNotAvailableDescription
        case sources
    }

    /// The fields that must cite a source: every field but `name` and `sources`.
    public static var sourcedFields: [String] {
        CodingKeys.allCases.filter { $0 != .name && $0 != .sources }.map(\.rawValue)
    }

    /// The longest duration a profile may give, in seconds (366 days; a profile's
    /// ``problems`` name a longer one).
    public static let longestDuration = BoundedNumber.yearSeconds

    /// Whole milliseconds for a duration in seconds, as timers take them.
    public static func milliseconds(_ seconds: Double) -> Int64 {
        Int64((seconds * 1000).rounded())
    }
}

