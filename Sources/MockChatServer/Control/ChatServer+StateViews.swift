import ChatProtocol
import MockChatCore
import PresenceCore

/// What `GET /control/connections` and `GET /control/presence` list: everything, or with
/// `uid`, `connection` or `limit` in the query, the first `limit` entries of each list
/// that match and how many match (docs/PROTOCOL.md, 12.5 and 12.6). A console that draws
/// 100 rows asks for 100: describing every one of thousands of connections holds the loop
/// for milliseconds, and every ping waiting meanwhile pays for it.
struct StateViewQuery {
    /// Only entries of this user.
    var uid: String?
    /// Only entries of this connection (its `id`, such as `c8`).
    var connection: String?
    /// At most this many entries per list.
    var limit: Int?

    /// Whether the query asks for everything (the reply then has no counts).
    var isWhole: Bool { uid == nil && connection == nil && limit == nil }

    static let largestLimit = 1_000_000

    init(_ query: [String: String]) throws(ControlError) {
        for name in query.keys.sorted() where !["uid", "connection", "limit"].contains(name) {
            throw ControlError(400, "unknown query parameter '\(name.prefix(40))'; this route takes uid, connection and limit")
        }
        uid = query["uid"]
        connection = query["connection"]
        limit = try ChatServer.queryInteger(query, "limit", in: 1...Self.largestLimit)
    }

    /// Whether an entry of user `uid` on connection `connection` is asked for.
    func picks(uid: String?, connection: String) -> Bool {
        (self.uid == nil || self.uid == uid) && (self.connection == nil || self.connection == connection)
    }
}

/// The first `limit` of the items a query picks, and how many it picks in all.
private struct Picked<Item> {
    var items: [Item] = []
    var matching = 0
    let limit: Int

    init(limit: Int?) { self.limit = limit ?? .max }

    mutating func offer(_ item: @autoclosure () -> Item) {
        matching += 1
        if items.count < limit { items.append(item()) }
    }
}

extension ChatServer {
    /// `GET /control/connections`: this node's WebSocket sessions and, in cluster mode,
    /// the other nodes' logged-in devices.
    func connectionsView(_ query: StateViewQuery) -> JSONValue {
        var picked = Picked<JSONValue>(limit: query.limit)
        let node = cluster?.configuration.node
        var total = 0
        for session in engine.connections {
            total += 1
            guard query.picks(uid: session.uid, connection: session.id.description) else { continue }
            picked.offer(Self.describe(session, node: node))
        }
        if let node {
            for device in engine.clusterDevices where device.node != node {
                total += 1
                guard query.picks(uid: device.uid, connection: device.connection) else { continue }
                picked.offer(Self.describe(device))
            }
        }
        var reply: JSONObject = ["connections": .array(picked.items)]
        if !query.isWhole {
            reply["matching"] = .integer(Int64(picked.matching))
            reply["total"] = .integer(Int64(total))
        }
        return .object(reply)
    }

    /// `GET /control/presence`: the online users, their devices on this node, and for each
    /// logged-in connection the online users whose presence it receives.
    func presenceView(_ query: StateViewQuery) -> JSONValue {
        let onlineUsers = engine.onlineUsers
        var online = Picked<String>(limit: query.limit)
        for uid in onlineUsers where query.uid == nil || query.uid == uid { online.offer(uid) }
        let shown = Set(online.items)
        // Who watches whom: everyone's table at once, or with a limit only the listed ones'.
        let everyone = query.limit == nil ? engine.watching() : nil
        // Each user's devices gathered first (growing a JSON array inside a JSON object
        // copies it, once per device), at most `limit` of them.
        var devices: [String: Picked<JSONValue>] = [:]
        var deviceOrder: [String] = [] // users in the order of their first connection, as always
        var subscriptions = Picked<JSONValue>(limit: query.limit)
        for session in engine.connections where session.stage == .loggedIn {
            guard let uid = session.uid else { continue }
            let connection = session.id.description
            if shown.contains(uid) {
                if devices[uid] == nil { deviceOrder.append(uid) }
                devices[uid, default: Picked(limit: query.limit)].offer(.object([
                    "connection": .string(connection), "deviceId": session.deviceId.map { .string($0) } ?? .null,
                    "platform": session.platform.map { .string($0.rawValue) } ?? .null,
                ]))
            }
            guard query.picks(uid: uid, connection: connection) else { continue }
            subscriptions.offer(.object([
                "connection": .string(connection), "uid": .string(uid), "subscription": session.subscription.json,
                "watching": .array((everyone.map { $0[session.id] ?? [] } ?? engine.watching(session.id, among: onlineUsers))
                    .map { .string($0) }),
            ]))
        }
        var reply: JSONObject = [
            "online": .array(online.items.map { .string($0) }),
            "devices": .object(JSONObject(deviceOrder.map { uid -> (String, JSONValue) in (uid, .array(devices[uid]?.items ?? [])) })),
            "subscriptions": .array(subscriptions.items),
        ]
        if !query.isWhole {
            reply["onlineMatching"] = .integer(Int64(online.matching))
            reply["subscriptionsMatching"] = .integer(Int64(subscriptions.matching))
            reply["deviceCounts"] = .object(JSONObject(deviceOrder.map { uid -> (String, JSONValue) in
                (uid, .integer(Int64(devices[uid]?.matching ?? 0)))
            }))
        }
        return .object(reply)
    }

    private static func describe(_ device: ClusterDevice) -> JSONValue {
        .object([
            "id": .string(device.connection), "uid": .string(device.uid), "deviceId": .string(device.deviceId),
            "platform": .string(device.platform.rawValue), "state": .string("logged-in"), "node": .string(device.node),
        ])
    }

    private static func describe(_ session: SessionInfo, node: String?) -> JSONValue {
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        var entry: JSONObject = [
            "id": .string(session.id.description), "uid": text(session.uid), "deviceId": text(session.deviceId),
            "platform": text(session.platform?.rawValue), "state": .string(session.stage.rawValue),
            "openedAt": .double(session.openedAt.seconds), "lastInboundAt": .double(session.lastInboundAt.seconds),
            "lastPingAt": session.lastPingAt.map { .double($0.seconds) } ?? .null,
            "subscription": session.stage == .loggedIn ? session.subscription.json : .null,
        ]
        // Cluster mode: this node's connections carry its name.
        if let node { entry["node"] = .string(node) }
        return .object(entry)
    }
}
