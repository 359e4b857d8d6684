import ChatProtocol
import EventLoop
import MockChatCore

/// The control API: plain HTTP with JSON bodies under `/control/` (docs/PROTOCOL.md).
///
/// Every request either applies in full or answers 4xx with `{"error": ...}` and
/// leaves the server as it was.
extension ChatServer {
    /// Answers one control request. In-process callers (the conformance harness) use
    /// this directly; remote ones reach it over HTTP.
    public func control(_ request: HTTPRequest) -> HTTPResponse {
        let route = request.method + " " + request.path
        // Control entries recorded while this request is handled name it, so that a
        // replay issues the same request (docs/PROTOCOL.md, "What a replay needs").
        trace.controlRoute = route
        defer { trace.controlRoute = nil }
        do throws(ControlError) {
            let body = try parseBody(request)
            let result: JSONValue
            switch route {
            case "GET /control/health":
                result = ["ok": true, "clock": .string(loop.clock.isVirtual ? "virtual" : "system"),
                          "now": .double(loop.clock.now.seconds)]
            case "POST /control/reset":
                var clock: Instant?
                if let seconds = body["clock"] {
                    guard loop.clock.isVirtual, let value = seconds.doubleValue else {
                        throw ControlError(400, "'clock' needs the virtual clock and a number of Unix seconds")
                    }
                    clock = try ControlError.checking { () throws(BoundedNumberError) in
                        try BoundedNumber.instant(seconds: value, "'clock'")
                    }
                }
                // Cluster mode: Redis forgets every device first, so this node's closes announce nothing.
                cluster?.reset()
                resetLocally(jumpingTo: clock, request: body)
                result = ["ok": true]
            case "POST /control/fixtures":
                result = try loadFixtures(body)
            case "GET /control/clock":
                result = ["mode": .string(loop.clock.isVirtual ? "virtual" : "system"), "now": .double(loop.clock.now.seconds)]
            case "POST /control/clock/advance":
                result = try advanceClock(body)
            case "POST /control/settle":
                result = settleState
            case "GET /control/connections":
                result = try connectionsView(StateViewQuery(request.query))
            case "GET /control/presence":
                result = try presenceView(StateViewQuery(request.query))
            case "POST /control/kick":
                result = try kick(body)
            case "GET /control/faults":
                result = faults.json
            case "POST /control/faults":
                result = try applyFault(body)
            case "DELETE /control/faults":
                clearFaults()
                trace.record(.control, time: loop.clock.now, text: "faults cleared")
                result = ["ok": true]
            case "POST /control/push":
                result = try push(body)
            case "GET /control/trace":
                return try tracePage(request.query)
            #if DEBUG
            case "POST /control/debug/stall":
                // Debug builds only: blocks the loop, as a long GC pause or a slow disk
                // would, so tests can check that the server's own stall harms nobody.
                guard let given = body["ms"]?.intValue else { throw ControlError(400, "stall needs 'ms', an integer from 1 to 10000") }
                let ms = try ControlError.checking { () throws(BoundedNumberError) in
                    try BoundedNumber.check(given, "'ms'", in: 1...10_000, unit: "milliseconds")
                }
                usleep(UInt32(ms) * 1000)
                result = ["ok": true, "stalledMs": .integer(ms)]
            #endif
            default:
                throw ControlError(404, "unknown control route '\(route.prefix(80))'")
            }
            var bytes: [UInt8] = []
            result.serialize(into: &bytes)
            return .json(status: 200, body: bytes)
        } catch {
            var bytes: [UInt8] = []
            JSONValue.object(JSONObject([("error", .string(error.message))])).serialize(into: &bytes)
            return .json(status: error.status, body: bytes)
        }
    }

    /// What `POST /control/settle` answers: the clock, the next timer, and the text
    /// messages the server sent and received on each WebSocket session, keyed by the
    /// client's port.
    /// A driver or harness holding the other ends compares its own counts with these
    /// (docs/DRIVER.md, "Settling"). The handler runs between loop callbacks, so every
    /// message read so far has been processed and its replies are queued.
    public var settleState: JSONValue {
        [
            "now": .double(loop.clock.now.seconds),
            "nextDeadline": loop.clock.nextDeadline.map { .double($0.seconds) } ?? .null,
            "traceSeq": .integer(Int64(trace.lastSequence)),
            "sockets": .array(sessionCounts.map { count in
                var socket: JSONObject = ["port": .integer(Int64(count.port)), "sent": .integer(Int64(count.sent)),
                                          "received": .integer(Int64(count.received))]
                if count.silent { socket["silent"] = .bool(true) }
                if count.receiving { socket["receiving"] = .bool(true) }
                if count.held { socket["held"] = .bool(true) }
                return .object(socket)
            }),
        ]
    }

    /// Default and largest number of entries in one `GET /control/trace` page.
    static let tracePageEntries = (default: 2_000, max: 20_000)

    /// One page of the trace: entries after `since`, at most `limit` of them. A reply
    /// with exactly `limit` lines may have a next page, which starts after its last `seq`.
    /// Pages keep every reply small, so reading a long trace never stalls the loop.
    private func tracePage(_ query: [String: String]) throws(ControlError) -> HTTPResponse {
        let since = try Self.queryInteger(query, "since", in: 0...Int.max) ?? 0
        let limit = try Self.queryInteger(query, "limit", in: 1...Self.tracePageEntries.max) ?? Self.tracePageEntries.default
        let page = trace.entries(after: since, limit: limit)
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/x-ndjson"),
                                                   ("X-Trace-Last-Seq", String(page.last?.sequence ?? since)),
                                                   ("X-Trace-Format", String(TraceLog.formatVersion))],
                            body: TraceLog.jsonLines(page))
    }

    /// The integer query parameter `name`, or `nil` when the query has none; text that is
    /// not an integer in `range` is a 400 that names the parameter and the text.
    static func queryInteger(_ query: [String: String], _ name: String,
                             in range: ClosedRange<Int>) throws(ControlError) -> Int? {
        guard let text = query[name] else { return nil }
        guard let number = Int(text), range.contains(number) else {
            let refusal = BoundedNumberError(field: "'\(name)'", value: "'\(text.prefix(40))'",
                                             range: "\(range.lowerBound) to \(range.upperBound)", unit: "", integral: true)
            throw ControlError(400, refusal.description)
        }
        return number
    }

    private func parseBody(_ request: HTTPRequest) throws(ControlError) -> JSONValue {
        guard !request.body.isEmpty else { return .object(JSONObject()) }
        let value: JSONValue
        do {
            value = try JSONParser.parse(request.body)
        } catch {
            throw ControlError(400, "the body is not valid JSON: \(error)")
        }
        guard value.objectValue != nil else { throw ControlError(400, "the body must be a JSON object") }
        return value
    }

    private func loadFixtures(_ body: JSONValue) throws(ControlError) -> JSONValue {
        do throws(FixtureError) {
            var directory = engine.directory
            var settings = engine.settings
            if let users = body["users"] { directory = try UserDirectory(json: ["users": users]) }
            if let app = body["app"] { settings = try settings.applying(app) }
            guard body["users"] != nil || body["app"] != nil else {
                throw FixtureError("expected 'users' and/or 'app'")
            }
            execute(engine.load(directory: directory, settings: settings, closing: .closedByControl, now: loop.clock.now))
            // The whole load, so that a replay starts from the same users and settings.
            trace.record(.control, time: loop.clock.now, frame: ["users": directory.json["users"] ?? .array([]), "app": settings.json],
                         text: "fixtures loaded: \(directory.records.count) users")
            return ["ok": true, "users": .integer(Int64(directory.records.count))]
        } catch {
            throw ControlError(400, error.description)
        }
    }

    private func advanceClock(_ body: JSONValue) throws(ControlError) -> JSONValue {
        guard loop.clock.isVirtual else { throw ControlError(409, "the clock is the system clock; start with --clock virtual") }
        // At most a year, checked before the seconds become milliseconds.
        let year = Int64(BoundedNumber.yearSeconds)
        let milliseconds: Int64
        if let ms = body["ms"]?.intValue {
            milliseconds = try ControlError.checking { () throws(BoundedNumberError) in
                try BoundedNumber.check(ms, "'ms'", in: 0...year * 1000, unit: "milliseconds")
            }
        } else if let seconds = body["seconds"]?.doubleValue {
            milliseconds = try ControlError.checking { () throws(BoundedNumberError) in
                try BoundedNumber.milliseconds(seconds: seconds, "'seconds'", in: 0...Double(year))
            }
        } else {
            throw ControlError(400, "give 'ms' (integer) or 'seconds' (number)")
        }
        let target = loop.clock.now.advanced(by: milliseconds)
        let fired = loop.clock.advance(to: target)
        trace.record(.control, time: loop.clock.now, frame: ["ms": .integer(milliseconds)],
                     text: "clock advanced \(milliseconds) ms, \(fired) timers fired")
        return ["now": .double(loop.clock.now.seconds), "fired": .integer(Int64(fired))]
    }

    /// Back to the initial users and settings, every connection closed, faults cleared.
    func resetLocally(jumpingTo clock: Instant? = nil, request: JSONValue? = nil) {
        engine.clusterReset()
        execute(engine.load(directory: initialDirectory, settings: initialSettings, closing: .closedByControl,
                            now: loop.clock.now))
        endStalled()
        if let clock { loop.clock.jump(to: clock) }
        // Requests the links still held belong to sessions that are gone; what they
        // held for the clients (events, the closes just sent) leaves at once.
        for id in inboundHeld.connections { removeHeld(.inbound, id) }
        clearFaults()
        trace.clear()
        // Give the freed trace back to the system, not only to the allocator.
        EventLoop.returnFreedMemory()
        trace.record(.control, time: loop.clock.now, frame: request, text: "reset")
    }
}

/// A control request that cannot be carried out: an HTTP status and a message.
struct ControlError: Error {
    var status: Int
    var message: String
    init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The result of `body`, whose number out of range becomes a 400 naming its field.
    static func checking<T>(_ body: () throws(BoundedNumberError) -> T) throws(ControlError) -> T {
        do throws(BoundedNumberError) { return try body() } catch { throw ControlError(400, error.description) }
    }
}
