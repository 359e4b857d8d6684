import ChatProtocol

/// The device policy, the one place that decides which of a user's logged-in devices a
/// login displaces, or whether the login is refused (003 "Reconnection kick strategy").
///
/// - A login displaces every other device with the same `deviceId`, whatever its platform.
/// - A mobile login beyond `mobileLimit` mobile devices displaces the oldest other mobiles,
///   as many as exceed the limit; or, when it asks not to kick (a reconnect with
///   `reconnectKickEnable` while the app lets clients choose, `clientKickControl`), it is
///   refused and displaces nothing.
///
/// `PresenceEngine` decides with ``decide(_:holders:)`` on one node and, in cluster mode,
/// over the devices of every node it knows of; Redis decides for the whole cluster with
/// ``lua``, the same rule in Lua, run by the claim script (`ClusterScripts.claim`).
/// One golden table checks both (`DevicePolicyGoldenTable` in the tests).
public struct DevicePolicy: Sendable, Equatable {
    /// Mobile devices a user may have logged in at once (`mobileDevicesPerUser`, at least 1).
    public var mobileLimit: Int
    /// Whether a client's `reconnectKickEnable` takes effect (`clientKickControl`).
    public var clientKickControl: Bool

    public init(mobileLimit: Int, clientKickControl: Bool) {
        self.mobileLimit = mobileLimit
        self.clientKickControl = clientKickControl
    }

    public init(_ settings: AppConfiguration) {
        self.init(mobileLimit: settings.mobileDevicesPerUser, clientKickControl: settings.clientKickControl)
    }

    /// What a login brings to the decision.
    public struct Login: Sendable, Equatable {
        public var deviceId: String
        public var platform: Platform
        public var reconnect: Bool
        public var reconnectKickEnable: Bool

        public init(deviceId: String, platform: Platform, reconnect: Bool = false, reconnectKickEnable: Bool = false) {
            self.deviceId = deviceId
            self.platform = platform
            self.reconnect = reconnect
            self.reconnectKickEnable = reconnectKickEnable
        }

        public init(_ request: LoginRequest) {
            self.init(deviceId: request.deviceId, platform: request.platform, reconnect: request.reconnect,
                      reconnectKickEnable: request.reconnectKickEnable)
        }
    }

    /// A device the user already has logged in; `id` names it to the caller (a
    /// connection on one node, a `node/connection` field in the cluster).
    public struct Holder<ID: Hashable & Sendable>: Sendable, Equatable {
        public var id: ID
        public var deviceId: String
        public var platform: Platform
        /// When it logged in (Unix seconds), for the order of age; 0 where the caller
        /// gives its holders in order already (one node: the order of login).
        public var since: Double

        public init(_ id: ID, deviceId: String, platform: Platform, since: Double = 0) {
            self.id = id
            self.deviceId = deviceId
            self.platform = platform
            self.since = since
        }
    }

    /// Why a device is displaced: the reason its `device.kicked` frame carries.
    public enum Reason: String, Sendable, CaseIterable {
        case sameDevice = "the same device connected again"
        case mobileLimit = "another mobile device logged in"
    }

    /// One displaced device and why.
    public struct Displacement<ID: Hashable & Sendable>: Sendable, Equatable {
        public var id: ID
        public var reason: Reason

        public init(_ id: ID, _ reason: Reason) {
            self.id = id
            self.reason = reason
        }
    }

    /// The outcome of a login.
    public enum Decision<ID: Hashable & Sendable>: Sendable, Equatable {
        /// Logged in, displacing these devices: the same device first, then mobiles oldest first.
        case admitted(displacing: [Displacement<ID>])
        /// Refused (`ERR_RECONNECT_KICK_REFUSED`, close 4004); nothing is displaced.
        case refused
    }

    /// Whether `login` asks not to kick and the app lets it (the reconnect flags).
    public func refusesToKick(_ login: Login) -> Bool {
        login.reconnect && login.reconnectKickEnable && clientKickControl
    }

    /// Decides `login` against the user's other devices, `holders`, given oldest first
    /// (the caller's order of age: order of login on one node; `since`, then field, in
    /// the cluster). Holders that are neither the same device nor mobile may be left
    /// out. O(holders).
    public func decide<ID>(_ login: Login, holders: [Holder<ID>]) -> Decision<ID> {
        var displaced: [Displacement<ID>] = []
        var mobiles: [ID] = []
        for holder in holders {
            if holder.deviceId == login.deviceId {
                displaced.append(Displacement(holder.id, .sameDevice))
            } else if login.platform == .mobile && holder.platform == .mobile {
                mobiles.append(holder.id)
            }
        }
        let excess = mobiles.count + 1 - mobileLimit
        if login.platform == .mobile && excess > 0 {
            if refusesToKick(login) { return .refused }
            displaced += mobiles.prefix(excess).map { Displacement($0, .mobileLimit) }
        }
        return .admitted(displacing: displaced)
    }

    /// The same rule in Lua, for the cluster's claim script: `decide(others, deviceId,
    /// platform, limit, refuses)`, where `others` is a list of `{id, deviceId, platform,
    /// since}` oldest first and `refuses` is ``refusesToKick(_:)``; returns nil when
    /// refused, otherwise a list of `{id, reason}`. Statement for statement
    /// ``decide(_:holders:)``; `older(x, y)` is the holders' order of age (`<`), for
    /// `table.sort`.
    public static let lua = """
        local function older(x, y)
          return x.since < y.since or (x.since == y.since and x.id < y.id)
        end
        local function decide(others, deviceId, platform, limit, refuses)
          local displaced, mobiles = {}, {}
          for _, other in ipairs(others) do
            if other.deviceId == deviceId then
              displaced[#displaced + 1] = {other.id, '\(Reason.sameDevice.rawValue)'}
            elseif platform == 'mobile' and other.platform == 'mobile' then
              mobiles[#mobiles + 1] = other.id
            end
          end
          local excess = #mobiles + 1 - limit
          if platform == 'mobile' and excess > 0 then
            if refuses then return nil end
            for i = 1, excess do displaced[#displaced + 1] = {mobiles[i], '\(Reason.mobileLimit.rawValue)'} end
          end
          return displaced
        end
        """
}

extension DevicePolicy.Holder: Comparable where ID: Comparable {
    /// The order of age, the cluster's: the earlier login, then the lower id. The claim
    /// script sorts by the same order (`older` in ``DevicePolicy/lua``).
    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.since, lhs.id) < (rhs.since, rhs.id) }
}
