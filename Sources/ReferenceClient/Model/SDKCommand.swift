import ChatProtocol

/// Everything an app (or the world around it) can do to the SDK: one case per public
/// call, app lifecycle change, network change and device event.
///
/// API calls get a ``CallID`` and complete with a ``CallResult`` (at once or later);
/// lifecycle, network and relaunch cases are environment inputs and get none.
public enum SDKCommand: Sendable, Equatable {
    // MARK: API calls

    /// `CometChat.init(appId:appSettings:)`.
    case initialize(AppSettings)
    /// `CometChat.login(UID:authKey:)`.
    case login(uid: String, authKey: String)
    /// `CometChat.login(authToken:)`.
    case loginWithToken(String)
    /// `CometChat.logout()`.
    case logout
    /// `CometChat.getLoggedInUser()`: completes with `.user` or `.none`.
    case getLoggedInUser
    /// `CometChat.connect()` (000, "Connect to the web-socket server").
    case connect
    /// `CometChat.disconnect()` (000, "Disconnect from the web-socket server").
    case disconnect
    /// `CometChat.ping()` (000, "Maintain long-standing background connection").
    case ping
    /// `CometChat.getUser(UID:)` (004, "Check User Status").
    case getUser(uid: String)
    /// `UsersRequest.fetchNext()` on the request called `request`; each name keeps its
    /// own paging cursor (004, "Get Online Users" / "Get Offline Users").
    case fetchNext(request: String, limit: Int, status: UserStatus?)
    /// `CometChat.addUserListener(_:_:)`.
    case addUserListener(String)
    /// `CometChat.removeUserListener(_:)`.
    case removeUserListener(String)
    /// `CometChat.addConnectionListener(_:_:)`.
    case addConnectionListener(String)
    /// `CometChat.removeConnectionListener(_:)`.
    case removeConnectionListener(String)
    /// `CometChat.getConnectionStatus()`: completes with `.status`.
    case getConnectionStatus
    /// `CometChat.backgroundTaskEnabled()` (002, Step 4): completes with `.flag`.
    case backgroundTaskEnabled
    /// `CometChat.configureServices(_:)` (002, Step 3).
    case configureServices(ApplicationState)

    // MARK: Environment

    /// The app is about to become inactive (`applicationWillResignActive`).
    case willResignActive
    /// The app is now in the background (`applicationDidEnterBackground`).
    case didBackground
    /// The app is active in the foreground again.
    case foreground
    /// The device's network changed.
    case network(NetworkCondition)
    /// The app process was killed and started again: memory is gone, the logged-in
    /// user persisted on disk is not (000, "Default SDK behaviour").
    case relaunch
    /// Something the device does on its own: DNS failure, sleep, throttling, a network
    /// path change (``DeviceEvent``).
    case device(DeviceEvent)

    /// Whether this case is an API call that gets a ``CallID``.
    public var isCall: Bool {
        switch self {
        case .willResignActive, .didBackground, .foreground, .network, .relaunch, .device: false
        default: true
        }
    }
}

/// The argument of `configureServices` (002, "ApplicationState Enum").
public enum ApplicationState: String, Sendable, Equatable, Codable {
    case willResignActive
    case didBackground
}

/// The device's network as the scenario sets it.
public enum NetworkCondition: String, Sendable, Equatable, Codable {
    /// Connected.
    case up
    /// No network: sockets die and cannot be opened.
    case down
    /// Connected but lossy: frames the server sends are lost, so replies (pongs) never
    /// arrive while what the client sends still gets through.
    case weak
}
