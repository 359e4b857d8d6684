import ChatProtocol
import PresenceCore

/// The heartbeat traffic a console's live stream may coalesce under load, and how a
/// flush's entries are cut into what goes out in full and what goes as one record.
///
/// Routine entries are exactly two kinds, recognised from the kept frame's text alone:
///
/// - an `in` entry whose frame is a compact ping, `{"id":N,"op":"ping"}`;
/// - an `out` entry whose frame is a pong, `{"id":N,"result":{"pong":true,"serverTime":T}}`.
///
/// Everything else (logins, other requests and replies, errors to a ping, events,
/// closes, faults, control requests, clock moves) is never routine. A flush holding at
/// most ``threshold`` routine entries sends every entry in full; one holding more sends
/// each run of two or more consecutive routine entries as one record
/// (`{"routine":{"count":N,"from":A,"to":B,"connections":K,"t":T}}`). A run is a
/// contiguous range of sequence numbers, so a page loads it back with one trace page.
enum RoutineTraffic {
    /// The most routine entries a flush sends in full: 50 in a 100 ms tick is 250
    /// pings a second, far above a handful of interactive clients.
    static let threshold = 50

    /// A piece of a flush: entries sent in full, or a run of routine entries sent as one record.
    enum Segment: Equatable {
        case entries(Range<Int>)
        case routine(Range<Int>)
    }

    /// Whether the kept entry at `position` of `entries` is routine.
    static func isRoutine(_ entries: TraceLog.Entries, at position: Int) -> Bool {
        let kind = entries.record(at: position).kind
        guard kind == .in || kind == .out, let frame = entries.frame(at: position) else { return false }
        return frame.withUnsafeBytes { bytes in
            kind == .in ? RequestDecoder.compactPingID(bytes) != nil : ServerMessage.isCompactPong(bytes)
        }
    }

    /// `entries` cut into segments in order: one `.entries` of them all when at most
    /// ``threshold`` are routine, else each run of two or more routine entries as a
    /// `.routine` segment and the rest (a lone routine entry too) as `.entries`.
    static func segments(of entries: TraceLog.Entries) -> [Segment] {
        var runs: [Range<Int>] = []
        var routineCount = 0
        var runStart: Int?
        for position in entries.indices {
            if isRoutine(entries, at: position) {
                routineCount += 1
                if runStart == nil { runStart = position }
            } else if let start = runStart {
                runs.append(start..<position)
                runStart = nil
            }
        }
        if let start = runStart { runs.append(start..<entries.endIndex) }
        let whole = Segment.entries(entries.startIndex..<entries.endIndex)
        guard routineCount > threshold else { return entries.isEmpty ? [] : [whole] }
        var segments: [Segment] = []
        var next = entries.startIndex
        for run in runs where run.count >= 2 {
            if next < run.lowerBound { segments.append(.entries(next..<run.lowerBound)) }
            segments.append(.routine(run))
            next = run.upperBound
        }
        if next < entries.endIndex { segments.append(.entries(next..<entries.endIndex)) }
        return segments
    }
}
