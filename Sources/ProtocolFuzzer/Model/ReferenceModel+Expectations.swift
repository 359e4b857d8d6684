import ChatProtocol

extension ReferenceModel {
    /// A group of assertions that becomes one `expect` step. Groups are separate steps
    /// so that the step that fails tells which kind of prediction went wrong.
    public enum CheckGroup: String, Sendable, CaseIterable {
        /// Online users, open sessions, and each wire's open state and close code.
        case state
        /// `user.online` / `user.offline` counts that changed in this step.
        case presence
        /// Replies and `device.kicked` counts that changed in this step.
        case replies
        /// Every wire's total number of frames: catches frames nobody predicted.
        case totals
    }

    /// What must hold after the last action, as `expect` mappings by group; groups
    /// with nothing to check are left out. Wire clients are checked while open and in
    /// the step that closes them; frame counts are written as `frames` patterns.
    public func expectations() -> [(group: CheckGroup, assertions: JSONValue)] {
        var state = JSONObject(), presence = JSONObject(), replies = JSONObject(), totals = JSONObject()
        state["server.online"] = .array(onlineUsers.map { .string($0) })
        state["server.connections"] = .integer(Int64(live.count))
        for name in wireOrder {
            guard let view = wires[name] else { continue }
            let closedNow = step.closed.contains(name)
            guard view.isOpen || closedNow else { continue }
            state["\(name).open"] = .bool(view.isOpen)
            if closedNow, view.closeCodeKnown {
                state["\(name).closeCode"] = view.closeCode.map { .integer(Int64($0)) } ?? .null
            }
            guard view.countsKnown else { continue }
            var events: [JSONValue] = [], answers: [JSONValue] = []
            for kind in (step.framesChanged[name] ?? []).sorted() {
                let pattern = JSONValue.object(JSONObject(kind.pattern + [("count", .integer(Int64(view.counts[kind] ?? 0)))]))
                switch kind {
                case .online, .offline: events.append(pattern)
                default: answers.append(pattern)
                }
            }
            if !events.isEmpty { presence["\(name).frames"] = .array(events) }
            if !answers.isEmpty { replies["\(name).frames"] = .array(answers) }
            totals["\(name).frames"] = ["count": .integer(Int64(view.total))]
        }
        return [(CheckGroup.state, state), (.presence, presence), (.replies, replies), (.totals, totals)]
            .filter { !$0.1.isEmpty }
            .map { ($0.0, .object($0.1)) }
    }
}
