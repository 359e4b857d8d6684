import ChatProtocol

/// What the app passes to `initialize`, after `AppSettings.AppSettingsBuilder`
/// (000, "Enable Manual Mode"; 004, "Presence Subscription").
public struct AppSettings: Sendable, Equatable {
    /// `autoEstablishSocketConnection(_:)`; `nil` takes the profile's default (auto mode
    /// for both profiles: 000, "Auto Mode").
    public var autoEstablishSocketConnection: Bool?
    /// `subscribePresenceForAllUsers()` / `ForFriends()` / `ForRoles(_:)`; none by default.
    public var presence: PresenceSubscription
    /// `setRegion(region:)`. Recorded only: the reference client always talks to the
    /// server address it was given.
    public var region: String
    /// 003 "Configure the reconnection kick strategy"; `nil` takes the profile's default.
    public var reconnectKickEnable: Bool?
    /// The device identity the server uses for its one-mobile-device rule.
    public var deviceId: String
    /// The kind of device.
    public var platform: Platform

    public init(autoEstablishSocketConnection: Bool? = nil, presence: PresenceSubscription = .none,
                region: String = "us", reconnectKickEnable: Bool? = nil,
                deviceId: String = "device-1", platform: Platform = .mobile) {
        self.autoEstablishSocketConnection = autoEstablishSocketConnection
        self.presence = presence
        self.region = region
        self.reconnectKickEnable = reconnectKickEnable
        self.deviceId = deviceId
        self.platform = platform
    }
}
