import ChatProtocol

extension ScenarioSession {
    /// Every client as it stands now (see ``ClientRecord``).
    func record() throws(ScenarioError) -> [String: ClientRecord] {
        var records: [String: ClientRecord] = [:]
        for (name, client) in clients {
            let state = try client.inspect()
            let observations = client.observations
            records[name] = ClientRecord(
                status: state.status.rawValue, backgroundTaskEnabled: state.backgroundTaskEnabled,
                loggedInUser: state.loggedInUser, connectionEvents: observations.compactMap(\.connectionEvent),
                attempts: observations.filter(\.isAttempt).map { seconds($0.time) },
                presence: observations.compactMap(\.userEvent).map { event in
                    ClientRecord.PresenceEvent(change: event.change, uid: event.user.uid, listener: event.listener,
                                               at: seconds(event.time), lastActiveAt: event.user.lastActiveAt,
                                               hasBlockedMe: event.user.hasBlockedMe, blockedByMe: event.user.blockedByMe)
                },
                lastResult: try lastResult(name).map(ClientRecord.assertion))
            records[name]?.citedRules = observations.compactMap(\.rules).flatMap { $0 }
            records[name]?.listenerCalls = Dictionary(grouping: observations.compactMap(\.listenerCall), by: \.listener)
                .mapValues { $0.map(\.name) }
        }
        return records
    }
}
