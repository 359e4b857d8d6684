import ChatProtocol
import EventLoop

/// One open console's live feed: the trace entries after the one it last got, as JSON
/// lines on a streamed HTTP response (`GET /control/console/events`).
///
/// The stream holds no entries of its own: it remembers the sequence number it has sent
/// up to and reads what follows from the trace. What it costs the server is bounded
/// however slow or gone the viewer is:
///
/// - at most ``writeBound`` bytes wait in the socket's queue; beyond it nothing is
///   written until the queue drains;
/// - the viewer is never more than ``lagBound`` entries behind: a viewer further behind
///   skips to the newest entries and is sent `{"skipped":N,"from":A,"to":B}`, and so
///   is one whose next entries have left the trace meanwhile;
/// - each flush reads at most ``batchEntries`` entries, so one viewer never holds up
///   the loop for long.
///
/// Under load the heartbeat traffic of a flush is coalesced (``RoutineTraffic``): runs
/// of pings and pongs go as one `{"routine":...}` record each, every other entry in full.
/// Flushes run on the streams' tick (``ConsoleStreams``).
final class ConsoleStream {
    static let writeBound = 256 * 1024
    /// Four ticks of a 50,000 entries/s load: a viewer that keeps up never skips.
    static let lagBound = 20_000
    static let batchEntries = 2_000

    let connection: TCPConnection
    /// The sequence number of the last entry sent or skipped.
    private(set) var sent: Int
    /// Entries skipped over the stream's life.
    private(set) var skipped = 0
    /// The connections of a routine run being counted (kept to reuse its storage).
    private var connections: Set<ConnectionID> = []

    init(connection: TCPConnection, since: Int) {
        self.connection = connection
        sent = since
    }

    /// Writes what the trace has after ``sent``, within the bounds. Returns whether
    /// entries remain that this flush did not write (the caller flushes again later).
    func flush(_ trace: TraceLog) -> Bool {
        guard connection.state == .open else { return false }
        let newest = trace.lastSequence
        guard newest > sent else { return false }
        guard connection.queuedWriteBytes < Self.writeBound else {
            // The drained queue arms the tick again; until then nothing more is queued.
            return false
        }
        var bytes: [UInt8] = []
        if newest - sent > Self.lagBound { skip(to: newest - Self.lagBound, into: &bytes) }
        let page = trace.entries(after: sent, limit: Self.batchEntries)
        if let first = page.first?.sequence, first > sent + 1 {
            // The trace let these go (its capacity, or a reset) before they were sent.
            skip(to: first - 1, into: &bytes)
        }
        if page.isEmpty, newest > sent {
            // Nothing kept after `sent` (a reset emptied the trace): nothing to send for them.
            skip(to: newest, into: &bytes)
        }
        for segment in RoutineTraffic.segments(of: page) {
            switch segment {
            case .entries(let range): page.prefix(from: range.lowerBound, limit: range.count).appendLines(to: &bytes)
            case .routine(let range): appendRoutine(page, range, to: &bytes)
            }
        }
        if let last = page.last?.sequence { sent = last }
        if !bytes.isEmpty { connection.write(bytes) }
        return sent < newest && connection.queuedWriteBytes < Self.writeBound
    }

    /// The first line, `{"hello":{"since":S,"lastSeq":N}}`: the stream is open.
    func hello(_ trace: TraceLog) {
        var bytes: [UInt8] = []
        JSONValue.object(JSONObject([("hello", .object(JSONObject([
            ("since", .integer(Int64(sent))), ("lastSeq", .integer(Int64(trace.lastSequence))),
        ])))])).serialize(into: &bytes)
        bytes.append(10)
        connection.write(bytes)
    }

    /// `{"routine":{"count":N,"from":A,"to":B,"connections":K,"t":T}}`: the run of
    /// routine entries at `range` of `page`, `t` the first one's time.
    private func appendRoutine(_ page: TraceLog.Entries, _ range: Range<Int>, to bytes: inout [UInt8]) {
        connections.removeAll(keepingCapacity: true)
        for position in range {
            if let connection = page.record(at: position).connection { connections.insert(connection) }
        }
        JSONValue.object(JSONObject([("routine", .object(JSONObject([
            ("count", .integer(Int64(range.count))),
            ("from", .integer(Int64(page.sequence(at: range.lowerBound)))),
            ("to", .integer(Int64(page.sequence(at: range.upperBound - 1)))),
            ("connections", .integer(Int64(connections.count))),
            ("t", .double(page.record(at: range.lowerBound).time.seconds)),
        ])))])).serialize(into: &bytes)
        bytes.append(10)
    }

    private func skip(to sequence: Int, into bytes: inout [UInt8]) {
        guard sequence > sent else { return }
        let count = sequence - sent
        skipped += count
        JSONValue.object(JSONObject([
            ("skipped", .integer(Int64(count))), ("from", .integer(Int64(sent + 1))), ("to", .integer(Int64(sequence))),
        ])).serialize(into: &bytes)
        bytes.append(10)
        sent = sequence
    }
}

/// The open consoles' streams and the tick they flush on.
///
/// A kept entry arms the tick (``tickMilliseconds``, on the machine's time whatever the
/// server's clock) unless it is armed; when it fires every stream flushes what came
/// meanwhile, and a flush cut short by ``ConsoleStream/batchEntries`` goes on in the
/// next loop turn. So the timer runs only while a console is open and entries arrive,
/// and a stream writes at most ten times a second however fast the trace grows.
final class ConsoleStreams {
    static let tickMilliseconds: UInt64 = 100

    private let loop: EventLoop
    private let trace: TraceLog
    private var streams: [ObjectIdentifier: ConsoleStream] = [:]
    private var flushQueued = false
    /// Made when the first console opens.
    private var tick: WallTimer?

    init(loop: EventLoop, trace: TraceLog) {
        self.loop = loop
        self.trace = trace
    }

    var count: Int { streams.count }
    /// Whether a flush waits for the tick (for tests: a tick has run once it is not).
    var isTickArmed: Bool { tick?.isArmed ?? false }
    var all: [ConsoleStream] { Array(streams.values) }

    /// Starts feeding `connection` the entries after `since`; the first flush comes at once.
    func open(_ connection: TCPConnection, since: Int) {
        let stream = ConsoleStream(connection: connection, since: since)
        let key = ObjectIdentifier(connection)
        streams[key] = stream
        let closed = connection.onClosed
        connection.onClosed = { [weak self] in
            closed?()
            self?.streams[key] = nil
            self?.updateHook()
        }
        // The viewer never sends anything after its request; reading tells when it goes.
        connection.onRead = { _ in }
        connection.onEnd = { [unowned connection] _ in connection.close() }
        // A drained queue takes what waits at the next tick.
        connection.onWritesDrained = { [weak self, unowned stream] in
            guard let self, stream.sent < trace.lastSequence else { return }
            armTick()
        }
        updateHook()
        stream.hello(trace)
        queueFlush()
    }

    /// Ends every stream (server shutdown); the loop's shutdown closes the tick's handle.
    func closeAll() {
        trace.onKeep = nil
        tick?.stop()
        for stream in streams.values { stream.connection.closeAfterWrites() }
    }

    /// The trace calls back only while a console is open, so no console costs nothing.
    private func updateHook() {
        if streams.isEmpty {
            trace.onKeep = nil
            tick?.stop()
        } else {
            if tick == nil { tick = WallTimer(loop: loop) }
            trace.onKeep = { [unowned self] in self.armTick() }
        }
    }

    private func armTick() {
        guard let tick, !tick.isArmed, !streams.isEmpty else { return }
        tick.start(after: Self.tickMilliseconds) { [weak self] in self?.flush() }
    }

    private func queueFlush() {
        guard !flushQueued, !streams.isEmpty else { return }
        flushQueued = true
        loop.deferToLoop { [weak self] in
            self?.flushQueued = false
            self?.flush()
        }
    }

    private func flush() {
        var more = false
        for stream in streams.values where stream.flush(trace) { more = true }
        if more { queueFlush() }
    }
}
