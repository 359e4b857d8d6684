/// Puts the channel's messages and a rejoin's snapshot in one order, so a node's view
/// of the cluster is always Redis's device set as of one `seq` (docs/CLUSTER.md).
///
/// Messages arrive on the subscriber connection and the snapshot on the command
/// connection, so either can be read first. While a snapshot is awaited, messages are
/// held; when it comes with the counter's value `S`, the held messages numbered after
/// `S` are applied in order and the rest are dropped (the snapshot contains them).
/// From then on a message is applied only if it is the next number: an older one is
/// already in the view, and a gap means the node missed something and must read a
/// snapshot again.
///
/// ```
///   offline ──subscribed──► catching up ──snapshot(S)──► live(S…)
///      ▲                       ▲   │ holds messages          │ next seq: apply
///      └──── disconnected ─────┼───┴─────────────────────────┤ older: drop
///                              └──── gap, or expired key ────┘
/// ```
struct ClusterSync {
    enum State: Equatable {
        /// Not subscribed: the bridge loops its own changes back.
        case offline
        /// A snapshot is on its way; messages wait here.
        case catchingUp(held: [ClusterMessage])
        /// Applied every message up to `seq`.
        case live(seq: Int64)
    }

    /// What to do with an arrival.
    enum Step: Equatable {
        case apply(ClusterEvent)
        /// Messages were missed: read a snapshot again.
        case resync
    }

    private(set) var state = State.offline

    /// A snapshot was asked for (after subscribing, a gap, or an expired liveness key).
    mutating func resyncStarted() {
        if case .catchingUp = state { return }
        state = .catchingUp(held: [])
    }

    /// The subscription ended.
    mutating func disconnected() {
        state = .offline
    }

    /// A message arrived on the channel.
    mutating func received(_ message: ClusterMessage) -> [Step] {
        switch state {
        case .offline:
            return []
        case .catchingUp(var held):
            state = .offline  // the enum lets go of the array, so the append does not copy it
            held.append(message)
            state = .catchingUp(held: held)
            return []
        case .live(let seq):
            if message.seq <= seq { return [] }
            guard message.seq == seq + 1 else {
                state = .catchingUp(held: [message])
                return [.resync]
            }
            state = .live(seq: message.seq)
            return [.apply(message.event)]
        }
    }

    /// A snapshot taken when the counter was `seq` arrived. Returns nil when the view is
    /// already at or past it (a second rejoin's older answer): ignore it. Otherwise the
    /// caller replaces its view with the snapshot, then carries out the returned steps:
    /// the held messages that came after it (and `resync` if some were missed).
    mutating func snapshotArrived(seq: Int64) -> [Step]? {
        let held: [ClusterMessage]
        switch state {
        case .offline: return nil
        case .live(let current) where current >= seq: return nil
        case .live: held = []
        case .catchingUp(let messages): held = messages
        }
        state = .live(seq: seq)
        var steps: [Step] = []
        let ordered = held.sorted { $0.seq < $1.seq }
        for (index, message) in ordered.enumerated() {
            let step = received(message)
            if step == [.resync] {
                state = .catchingUp(held: Array(ordered[index...]))
                return steps + step
            }
            steps += step
        }
        return steps
    }
}
