import ChatProtocol

/// A logged-in device as the cluster knows it: which node holds it, on which connection.
public struct ClusterDevice: Sendable, Equatable, Hashable {
    public var uid: String
    public var node: String
    /// The connection's id on its node (`c12`).
    public var connection: String
    public var deviceId: String
    public var platform: Platform
    /// When it logged in (Unix seconds): the user's `lastActiveAt` in its online event.
    public var since: Double

    public init(uid: String, node: String, connection: String, deviceId: String, platform: Platform, since: Double) {
        self.uid = uid
        self.node = node
        self.connection = connection
        self.deviceId = deviceId
        self.platform = platform
        self.since = since
    }

    /// The Redis hash field naming this device: `node/connection`.
    public var field: String { node + "/" + connection }

    /// This device as the device policy sees it, named by its field.
    public var holder: DevicePolicy.Holder<String> {
        DevicePolicy.Holder(field, deviceId: deviceId, platform: platform, since: since)
    }
}

/// The device policy Redis applies when a device logs in (ClusterScripts.claim): one
/// decision for the whole cluster, so two logins racing on two nodes cannot both keep
/// the user's mobile slot.
public struct DeviceClaim: Sendable, Equatable {
    /// Mobile devices a user may have logged in at once (`mobileDevicesPerUser`).
    public var mobileLimit: Int
    /// A reconnect asking not to kick: refused (4004) if the slot is taken, rather than
    /// kicking the device that holds it.
    public var refusesToKick: Bool

    public init(mobileLimit: Int, refusesToKick: Bool) {
        self.mobileLimit = mobileLimit
        self.refusesToKick = refusesToKick
    }

    /// The claim of `login` under `policy`: its limit, and whether a mobile login asks
    /// not to kick (``DevicePolicy/refusesToKick(_:)``).
    public init(_ policy: DevicePolicy, _ login: DevicePolicy.Login) {
        self.init(mobileLimit: policy.mobileLimit,
                  refusesToKick: login.platform == .mobile && policy.refusesToKick(login))
    }
}
