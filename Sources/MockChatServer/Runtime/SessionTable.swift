import ChatProtocol

/// The server's session table, the bookkeeping of its WebSocket sessions apart from their
/// sockets (which the runtime keeps): which connection ids have been given out, who each
/// session is for the trace and faults, and how many sessions of each address have not
/// logged in yet. A plain value: no socket, clock or trace.
///
/// Invariants:
/// - Connection ids are given out once each, counting up from 1; a reset does not reuse them.
/// - A session has a label (its uid and device) from its login until its end, and a claim
///   (what its login frame named) from that frame until its end; faults match on labels
///   only, the trace on either.
/// - An address's pending count is the number of its sessions that have neither logged in
///   nor ended, and an address with none has no entry.
struct SessionTable {
    /// A session's user and device.
    typealias Label = (uid: String, deviceId: String)

    private var nextID = 1
    private var labels: [ConnectionID: Label] = [:]
    private var claims: [ConnectionID: Label] = [:]
    private var pendingHost: [ConnectionID: String] = [:]
    private var pendingByHost: [String: Int] = [:]

    /// A new session's id; with `host`, the session counts as not logged in from that
    /// address until it logs in or ends.
    mutating func open(pendingFrom host: String? = nil) -> ConnectionID {
        let id = ConnectionID(nextID)
        nextID += 1
        if let host {
            pendingHost[id] = host
            pendingByHost[host, default: 0] += 1
        }
        return id
    }

    /// Sessions from `host` that have not logged in yet.
    func pendingCount(from host: String) -> Int { pendingByHost[host, default: 0] }

    /// The uid and device of a logged-in session: what faults match on.
    func label(_ id: ConnectionID) -> Label? { labels[id] }

    /// The uid and device a session's trace entries carry: its label, or else its claim.
    func tracedLabel(_ id: ConnectionID) -> Label? { labels[id] ?? claims[id] }

    /// Notes what a login frame on `id` named, for the trace.
    mutating func claim(_ id: ConnectionID, _ label: Label) { claims[id] = label }

    /// Labels a session that has just logged in.
    mutating func logIn(_ id: ConnectionID, as label: Label) {
        labels[id] = label
        settlePending(id)
    }

    /// The session on `id` ended: its entries are removed, and its traced label returned.
    mutating func end(_ id: ConnectionID) -> Label? {
        let label = labels.removeValue(forKey: id) ?? claims[id]
        claims[id] = nil
        settlePending(id)
        return label
    }

    /// The session logged in or ended: it no longer counts against its address.
    mutating func settlePending(_ id: ConnectionID) {
        guard let host = pendingHost.removeValue(forKey: id) else { return }
        pendingByHost[host, default: 1] -= 1
        if pendingByHost[host] == 0 { pendingByHost[host] = nil }
    }
}
