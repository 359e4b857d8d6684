import MockChatServer

/// The model reads the server's settings as data: the values, never the engine's rules.
extension ReferenceModel.Settings {
    /// The model's view of the server's settings.
    public init(_ app: AppConfiguration) {
        clientKickControl = app.clientKickControl
        mobileDevicesPerUser = app.mobileDevicesPerUser
        heartbeatMilliseconds = app.heartbeatTimeoutMilliseconds
        loginTimeoutMilliseconds = app.loginTimeoutMilliseconds
        authKey = app.authKey
    }

    /// The embedded `app.json`, with the two settings histories vary.
    public init(clientKickControl: Bool? = nil, mobileDevicesPerUser: Int? = nil) {
        self.init(Self.serverDefaults)
        if let clientKickControl { self.clientKickControl = clientKickControl }
        if let mobileDevicesPerUser { self.mobileDevicesPerUser = mobileDevicesPerUser }
    }

    private static let serverDefaults = (try? FixtureSet.embedded().settings) ?? AppConfiguration()
}
