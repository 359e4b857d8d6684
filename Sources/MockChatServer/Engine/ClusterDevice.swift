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
}
