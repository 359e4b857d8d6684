import ChatProtocol
import MockChatCore

/// Cluster inputs (docs/CLUSTER.md). In cluster mode the engine does not decide
/// presence from its own connections: it announces each login and logout of a local
/// device as an action, and presence follows the cluster-wide device stream that every
/// node reads in the same order. A user is online while the stream holds one of its
/// devices; `user.online` / `user.offline` go out when that set becomes non-empty or
/// empty, to this node's subscribers only.
extension PresenceEngine {
    /// Turns cluster mode on for node `node`.
    public mutating func joinCluster(node: String) {
        cluster = ClusterView(node: node)
    }

    /// Devices of the whole cluster (this node's too), in stream order; empty outside cluster mode.
    public var clusterDevices: [ClusterDevice] { cluster?.devices.keys.sorted().flatMap { cluster!.devices[$0]! } ?? [] }

    /// This node's logged-in devices, as announced.
    package var localClusterDevices: [ClusterDevice] { connections.compactMap(clusterDevice) }

    /// This node's logged-in devices of `uid` that the device policy weighs (its mobiles
    /// and one per device id). O(the user's devices on this node).
    func localClusterDevices(of uid: String) -> [ClusterDevice] {
        connectionIDs(of: uid).compactMap { session($0).flatMap(clusterDevice) }
    }

    private func clusterDevice(_ session: SessionInfo) -> ClusterDevice? {
        guard let node = cluster?.node, session.stage == .loggedIn, let uid = session.uid,
              let platform = session.platform else { return nil }
        return ClusterDevice(uid: uid, node: node, connection: session.id.description,
                             deviceId: session.deviceId ?? "", platform: platform,
                             since: session.loggedInAt?.seconds ?? session.lastInboundAt.seconds)
    }

    /// The stream announced a device. O(the user's devices), plus the fan-out when the
    /// user comes online: the view is changed in place, never copied.
    public mutating func clusterDeviceAdded(_ device: ClusterDevice, now: Instant) -> [EngineAction] {
        guard let known = cluster?.devices[device.uid] ?? (cluster == nil ? nil : []) else { return [] }
        guard !known.contains(where: { $0.field == device.field }) else { return [] }
        cluster?.devices[device.uid, default: []].append(device)
        guard known.isEmpty else { return [] }
        setLastActive(device.uid, device.since)
        return presenceChanged(device.uid, online: true)
    }

    /// The stream retracted a device (logout, close, kick, or its node died). O(the
    /// user's devices), plus the fan-out when the user goes offline.
    public mutating func clusterDeviceRemoved(uid: String, field: String, lastActiveAt: Double, now: Instant) -> [EngineAction] {
        guard var devices = cluster?.devices[uid], devices.contains(where: { $0.field == field }) else { return [] }
        devices.removeAll { $0.field == field }
        cluster?.devices[uid] = devices.isEmpty ? nil : devices
        guard devices.isEmpty else { return [] }
        setLastActive(uid, lastActiveAt)
        return presenceChanged(uid, online: false)
    }

    /// The whole device set as read from Redis after (re)connecting: whatever differs
    /// from what this node believed becomes online / offline events.
    public mutating func clusterSnapshot(_ devices: [ClusterDevice], now: Instant) -> [EngineAction] {
        guard let view = cluster else { return [] }
        let wanted = Set(devices.map { $0.uid + " " + $0.field })
        var actions: [EngineAction] = []
        for device in view.devices.values.joined() where !wanted.contains(device.uid + " " + device.field) {
            actions += clusterDeviceRemoved(uid: device.uid, field: device.field, lastActiveAt: now.seconds, now: now)
        }
        for device in devices { actions += clusterDeviceAdded(device, now: now) }
        return actions
    }

    /// Another node reset the cluster: forget every device without events.
    public mutating func clusterReset() {
        cluster?.devices = [:]
    }

    /// Redis answered a claim that waits (``DeviceClaim/refusesToKick``): `granted`
    /// completes the login, otherwise it is refused with 4004, as on one node.
    public mutating func clusterClaimAnswered(_ id: ConnectionID, granted: Bool, now: Instant) -> [EngineAction] {
        guard let pending = cluster?.pendingLogins.removeValue(forKey: id) else { return [] }
        guard session(id)?.stage == .awaitingLogin else {
            // The connection ended while Redis decided: take back the device it stored.
            return granted ? [.retractDevice(pending.device, lastActiveAt: now.seconds, thenClose: nil)] : []
        }
        guard granted else { return refuse(id, pending.requestID, .reconnectKickRefused, close: .reconnectRefused, now: now) }
        var actions = completeLogin(pending.login, pending.requestID, on: id, uid: pending.device.uid,
                                    displacing: pending.displaced, now: now)
        if let kick = pending.kickedBy {
            actions += self.kick(id, reason: kick.reason, byDeviceId: kick.byDeviceId, byPlatform: kick.byPlatform, now: now)
        }
        return actions
    }

    /// Another node's login displaced a device of this node: the same frame and close
    /// code as a kick on one node. A login still waiting for its claim's answer is
    /// kicked once the answer has logged it in.
    public mutating func kick(_ id: ConnectionID, reason: String, byDeviceId: String, byPlatform: Platform,
                              now: Instant) -> [EngineAction] {
        if cluster?.pendingLogins[id] != nil {
            cluster?.pendingLogins[id]?.kickedBy = (reason, byDeviceId, byPlatform)
            return []
        }
        guard session(id)?.stage == .loggedIn else { return [] }
        return [.send([id], .deviceKicked(reason: reason, byDeviceId: byDeviceId, byPlatform: byPlatform))]
            + disconnect(id, code: .deviceKicked, reason: reason, now: now)
    }
}

extension PresenceEngine {
    /// The device policy over the devices of every node this node knows of, oldest
    /// first as Redis orders them (the holders' `<`, the claim script's `older`), so a node displaces
    /// its own devices exactly when Redis would; the others' are left to Redis, which
    /// decides again on its own copy (``DevicePolicy/lua``). O(the user's devices).
    func clusterDecision(_ login: DevicePolicy.Login, policy: DevicePolicy,
                         uid: String) -> DevicePolicy.Decision<ConnectionID> {
        guard let cluster else { return .admitted(displacing: []) }
        let holders = (localClusterDevices(of: uid) + cluster.remote(uid)).map(\.holder).sorted()
        guard case .admitted(let displaced) = policy.decide(login, holders: holders) else { return .refused }
        let prefix = cluster.node + "/"
        return .admitted(displacing: displaced.compactMap { displacement in
            guard displacement.id.hasPrefix(prefix), let id = ConnectionID(String(displacement.id.dropFirst(prefix.count)))
            else { return nil }
            return DevicePolicy.Displacement(id, displacement.reason)
        })
    }
}

/// A login whose reply waits for Redis's answer to its device claim.
struct PendingLogin: Sendable {
    let login: LoginRequest
    let requestID: RequestID
    let device: ClusterDevice
    /// This node's devices the login displaces once granted.
    let displaced: [DevicePolicy.Displacement<ConnectionID>]
    /// A kick that arrived from the stream before the answer.
    var kickedBy: (reason: String, byDeviceId: String, byPlatform: Platform)?
}

/// What a clustered engine knows of the other nodes: every device of the stream.
struct ClusterView: Sendable {
    let node: String
    var devices: [String: [ClusterDevice]] = [:]
    var pendingLogins: [ConnectionID: PendingLogin] = [:]

    func isOnline(_ uid: String) -> Bool { devices[uid] != nil }

    /// Devices of `uid` held by other nodes.
    func remote(_ uid: String) -> [ClusterDevice] { (devices[uid] ?? []).filter { $0.node != node } }
}
