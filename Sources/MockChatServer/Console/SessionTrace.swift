import ChatProtocol

/// The kept trace, or a range of it, as the text of a trace file (the header line, then
/// one entry per line): what "save as scenario" hands to `scenarios from-trace`.
enum SessionTrace {
    /// The trace file of the kept entries with `from <= seq <= to`, or nil when there is
    /// none. A range that starts after a connection opened leaves that connection out
    /// (its frames without its login would replay as nothing the server accepts); the
    /// file starts at the clock reading just before the range's first entry.
    static func text(of trace: TraceLog, from: Int, to: Int) -> [UInt8]? {
        let all = trace.entries
        let range = all.filter { $0.sequence >= from && $0.sequence <= to }
        guard let first = range.first else { return nil }
        var opened: Set<ConnectionID> = []
        var lines: [UInt8] = []
        for entry in range {
            if let connection = entry.connection {
                if entry.kind == .open { opened.insert(connection) }
                guard opened.contains(connection) else { continue }
            }
            entry.json.serialize(into: &lines)
            lines.append(10)
        }
        var start = first.time
        if let before = all.last(where: { $0.sequence < first.sequence }) {
            start = before.time
        } else if first.kind == .control, first.text?.hasPrefix("clock advanced") == true, let ms = first.frame?["ms"]?.intValue {
            // The advance itself is the first step: the file starts where the clock stood before it.
            start = first.time.advanced(by: -ms)
        }
        var header = trace.headerLine(overriding: JSONObject([("start", .double(start.seconds))]))
        header.append(contentsOf: lines)
        return header
    }
}
