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
/// - each flush writes at most ``batchEntries`` entries, so one viewer never holds up
///   the loop for long.
///
/// Flushes run once per loop turn in which something was kept (``ConsoleStreams``).
final class ConsoleStream {
    static let writeBound = 256 * 1024
    static let lagBound = 5_000
    static let batchEntries = 2_000

    let connection: TCPConnection
    /// The sequence number of the last entry sent or skipped.
    private(set) var sent: Int
    /// Entries skipped over the stream's life.
    private(set) var skipped = 0

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
            // The drain callback flushes again; until then nothing more is queued.
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
        page.appendLines(to: &bytes)
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

/// The open consoles' streams and the one flush per loop turn they share.
final class ConsoleStreams {
    private let loop: EventLoop
    private let trace: TraceLog
    private var streams: [ObjectIdentifier: ConsoleStream] = [:]
    private var flushQueued = false

    init(loop: EventLoop, trace: TraceLog) {
        self.loop = loop
        self.trace = trace
    }

    var count: Int { streams.count }
    var all: [ConsoleStream] { Array(streams.values) }

    /// Starts feeding `connection` the entries after `since`.
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
        connection.onWritesDrained = { [weak self] in self?.queueFlush() }
        updateHook()
        stream.hello(trace)
        queueFlush()
    }

    /// Ends every stream (server shutdown or reset of the console).
    func closeAll() {
        for stream in streams.values { stream.connection.closeAfterWrites() }
    }

    /// The trace calls back only while a console is open, so no console costs nothing.
    private func updateHook() {
        trace.onKeep = streams.isEmpty ? nil : { [unowned self] in self.queueFlush() }
    }

    private func queueFlush() {
        guard !flushQueued, !streams.isEmpty else { return }
        flushQueued = true
        loop.deferToLoop { [weak self] in self?.flush() }
    }

    private func flush() {
        flushQueued = false
        var more = false
        for stream in streams.values where stream.flush(trace) { more = true }
        if more { queueFlush() }
    }
}
