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
}
