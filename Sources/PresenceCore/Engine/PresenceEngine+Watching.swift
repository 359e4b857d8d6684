import ChatProtocol

extension PresenceEngine {
    /// For each logged-in connection, the online users (of this node) whose presence
    /// events it receives, in uid order: who is subscribed to whom, as the console
    /// shows it. O(online users + their subscribers), what one round of presence events
    /// to everyone would cost.
    public func watching() -> [ConnectionID: [String]] {
        var result: [ConnectionID: [String]] = [:]
        for uid in onlineUsers {
            guard let record = directory.record(uid) else { continue }
            for id in subscribers(of: record) where session(id)?.uid != uid {
                result[id, default: []].append(uid)
            }
        }
        return result
    }

    /// One connection's entry of ``watching()``, for a view that lists a few connections
    /// out of many: which of `online` (``onlineUsers``) its subscription covers.
    /// O(online users), times a friends lookup each for a friends subscription.
    public func watching(_ id: ConnectionID, among online: [String]) -> [String] {
        guard let session = session(id), session.stage == .loggedIn, let viewer = session.uid else { return [] }
        return online.filter { uid in
            guard uid != viewer, let record = directory.record(uid) else { return false }
            switch session.subscription {
            case .allUsers: return true
            case .roles(let roles): return record.role.map(roles.contains) ?? false
            case .friends: return directory.friends(of: uid).contains(viewer)
            case .none: return false
            }
        }
    }
}
