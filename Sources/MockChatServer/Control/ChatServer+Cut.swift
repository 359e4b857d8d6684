import ChatProtocol
import EventLoop

/// A `cut` fault (docs/PROTOCOL.md, 12.7, "Cuts"): the matching connections end after
/// so many bytes of traffic or so much time, by a reset, an orderly end without a close
/// frame, or a silence.
public struct CutFault: Sendable, Equatable {
    public enum How: String, Sendable { case reset, end, silence }
    public var selector: FaultPlan.Selector
    /// Text-frame payload bytes, both directions, counted from when the cut applies.
    public var afterBytes: Int?
    public var afterMs: Int64?
    public var how: How

    var json: JSONValue {
        var object = JSONObject([("selector", selector.json)])
        if let afterBytes { object["afterBytes"] = .integer(Int64(afterBytes)) }
        if let afterMs { object["afterMs"] = .integer(afterMs) }
        object["how"] = .string(how.rawValue)
        return .object(object)
    }
}

/// A connection a cut counts for.
struct CutProgress {
    var rule: CutFault
    var bytes = 0
    var timer: Clock.TimerID?
}

extension ChatServer {
    /// Sets (or removes) a cut; the number of connections it now counts for.
    func setCut(_ rule: CutFault, enabled: Bool) -> Int {
        faults.cuts.removeAll { $0.selector == rule.selector }
        for (id, progress) in cutting where progress.rule.selector == rule.selector {
            loop.clock.cancel(progress.timer)
            cutting[id] = nil
        }
        guard enabled else { return 0 }
        faults.cuts.append(rule)
        let targets = connections(matching: rule.selector)
        targets.forEach { startCut(rule, on: $0) }
        return targets.count
    }

    /// A connection logged in: the last cut matching it starts counting.
    func startCutIfMatching(_ id: ConnectionID) {
        let label = loggedInLabel(id)
        guard cutting[id] == nil,
              let rule = faults.cuts.last(where: { $0.selector.matches(uid: label?.uid, deviceId: label?.deviceId) }) else { return }
        startCut(rule, on: id)
    }

    /// Counts `bytes` of a text frame to or from `id`; cuts the connection past the limit.
    func countForCut(_ bytes: Int, on id: ConnectionID) {
        guard var progress = cutting[id], let limit = progress.rule.afterBytes else { return }
        progress.bytes += bytes
        cutting[id] = progress
        if progress.bytes >= limit { cut(id, after: "\(progress.bytes) bytes") }
    }

    private func startCut(_ rule: CutFault, on id: ConnectionID) {
        var progress = CutProgress(rule: rule)
        if let ms = rule.afterMs {
            progress.timer = loop.clock.schedule(after: ms) { [weak self] in self?.cut(id, after: "\(ms) ms") }
        }
        cutting[id] = progress
    }

    private func cut(_ id: ConnectionID, after what: String) {
        guard let progress = cutting.removeValue(forKey: id), let socket = socket(id) else { return }
        loop.clock.cancel(progress.timer)
        let label = tracedLabel(id)
        trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                     text: "cut after \(what): \(progress.rule.how.rawValue)")
        switch progress.rule.how {
        case .reset: socket.drop(reset: true)
        case .end: socket.endWithoutCloseFrame()
        case .silence:
            silenceConnection(id)
        }
    }

    /// Stops counting for a closed connection.
    func forgetCut(_ id: ConnectionID) {
        guard let progress = cutting.removeValue(forKey: id) else { return }
        loop.clock.cancel(progress.timer)
    }
}
