import ChatProtocol
import MockChatServer

/// Builds the sequence diagram's rows of one run from the server trace and the steps.
enum RunTimeline {
    /// Frames, connection ends, faults and clock moves from the trace, plus one row per
    /// step; each frame is placed on the lane of the client whose device it carries.
    static func events(view: TraceView, session: ScenarioSession, steps: [Step], stepTimes: [(step: Int, at: Double, afterSequence: Int?)],
                       failedStep: Int?) -> [TimelineEvent] {
        var laneOfDevice: [String: String] = [:]
        for name in session.names {
            laneOfDevice[session.devices[name]?.deviceId ?? "\(name)-device"] = name
        }
        func lane(_ entry: TraceLog.Entry) -> String {
            if let device = view.device(entry), let name = laneOfDevice[device] { return name }
            return view.uid(entry) ?? entry.connection?.description ?? "?"
        }
        // Sorted by time, then by trace sequence; a step sits after the entries recorded before it began.
        var events: [(event: TimelineEvent, order: Double)] = []
        let byNumber = Dictionary(steps.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        for (number, at, after) in stepTimes {
            let order = after.map { Double($0) + 0.5 } ?? -1
            events.append((TimelineEvent(at: at, lane: "steps", kind: .step,
                                         label: "\(number): \(String((byNumber[number]?.text ?? "").prefix(90)))",
                                         failed: number == failedStep), order))
            // Clock jumps come from the steps: the in-process server records none.
            if case .advance(let milliseconds)? = byNumber[number]?.action {
                let label = String(format: "clock +%g s → %g s", Double(milliseconds) / 1000, at + Double(milliseconds) / 1000)
                events.append((TimelineEvent(at: at, lane: "server", kind: .clock, label: label), order + 0.1))
            }
        }
        let ends = Dictionary(view.connectionEnds().map { ($0.connection, $0) }, uniquingKeysWith: { first, _ in first })
        var ended: Set<String> = []
        for entry in view.entries where !TraceView.isKeepAlive(entry) {
            let at = view.time(entry)
            let order = Double(entry.sequence)
            func add(_ event: TimelineEvent) { events.append((event, order)) }
            switch entry.kind {
            case .in:
                add(TimelineEvent(at: at, lane: lane(entry), kind: .request, label: summary(entry)))
            case .out:
                add(TimelineEvent(at: at, lane: lane(entry), kind: .reply, label: summary(entry)))
            case .close:
                guard let connection = entry.connection?.description, let end = ends[connection],
                      ended.insert(connection).inserted else { continue }
                let code = end.code == .null ? "no code" : end.code.description
                add(TimelineEvent(at: at, lane: lane(entry), kind: .close, label: "closed by \(end.by) (\(code))"))
            case .fault:
                add(TimelineEvent(at: at, lane: lane(entry), kind: .fault, label: entry.text ?? "fault"))
            case .open, .control:
                break
            }
        }
        return events.sorted { ($0.event.at, $0.order) < ($1.event.at, $1.order) }.map(\.event)
    }

    /// A short label for a frame: its op, event, error code or result kind.
    private static func summary(_ entry: TraceLog.Entry) -> String {
        guard let frame = entry.frame else { return String((entry.text ?? "").prefix(60)) }
        if let op = frame["op"]?.stringValue { return op + (frame["uid"]?.stringValue.map { " \($0)" } ?? "") }
        if let event = frame["event"]?.stringValue {
            return event + (frame["user"]?["uid"]?.stringValue.map { " \($0)" } ?? "")
        }
        if let code = frame["error"]?["errorCode"]?.stringValue { return "error \(code)" }
        if let result = frame["result"]?.objectValue { return "result " + result.keys.prefix(3).joined(separator: ",") }
        return String(frame.description.prefix(60))
    }
}
