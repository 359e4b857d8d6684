import ChatProtocol
import ConformanceHarness
import MockChatServer

/// Turns a trace file into a ``Recording``: one wire client per connection, named
/// after its user, sending the recorded frames at the recorded times; control
/// requests as the server steps that issue them again; and what the server sent as
/// expectations.
///
/// | entry | becomes |
/// |---|---|
/// | `open` | `wire: NAME` |
/// | `in` | `NAME.send: FRAME` (`sendText` for text that is not a request object) |
/// | `out` | `NAME.frames: {nth: N, ...}` (``FramePattern``) |
/// | `close` | `server.closed: {by, code, at}`; a client's close or drop becomes its action too |
/// | `control` | the step that issues the same request (``ServerShorthand``); a clock advance is time passing |
///
/// A fault may hold back, slow, split or lose delivery, so a connection that gets a
/// frame while one is in force (from any other control request until `DELETE
/// /control/faults` or a reset) is checked on the server's side from then on:
/// `server.sent: {to, device, frame.<path>, at}`, what the trace shows it decided.
///
/// Secrets the trace redacted are put back where the recording shows they were right:
/// a login that succeeded gets the key or token the replaying server holds, one that
/// failed with `ERR_AUTH_FAILED` keeps `<redacted>`, which fails the same way. The
/// recording ends where the server began shutting down.
public struct RecordingReader {
    private let trace: TraceFile
    private var recording: Recording
    /// Wire client name of each connection.
    private var names: [String: String] = [:]
    private var received: [String: Int] = [:]
    private var ended: Set<String> = []
    private var ends: [String: TraceView.ConnectionEnd] = [:]
    private var droppedByFault: Set<String> = []
    /// Whether a fault (or any control request that is not a reset, a fixture load or a
    /// clock advance) has been made since the last `DELETE /control/faults` or reset.
    private var faultsInForce = false
    /// Connections that got a frame while a fault was in force: what they receive may
    /// differ from what the server sent, so the server's side is checked instead.
    private var uncertain: Set<String> = []
    /// The reply to each login frame, by connection and request id.
    private var loginReplies: [String: JSONValue] = [:]
    /// The latency faults in force: frames read late were sent earlier.
    private var latency = RecordedLatency()
    private let startFixtures: Fixtures
    private var fixtures: Fixtures

    /// The users and app settings in force, with the secrets a replay can use.
    struct Fixtures {
        var users: JSONValue
        var app: JSONValue
        var tokens: [String: String] = [:]
        var authKey: String
    }

    /// Reads `trace`; fails, naming the line and the field, on a control entry without a
    /// route, a frame the trace only summarised, or an entry whose step would not be a
    /// valid scenario step.
    public static func read(_ trace: TraceFile) throws(TraceError) -> Recording {
        var reader = try RecordingReader(trace)
        try reader.run()
        guard !reader.recording.actionIndices.isEmpty else {
            throw TraceError("nothing to replay: no connection, frame or control request before the end", file: trace.path)
        }
        return reader.recording
    }

    private init(_ trace: TraceFile) throws(TraceError) {
        self.trace = trace
        let virtual = trace.clock == "virtual"
        recording = Recording(clock: trace.clock, toleranceMilliseconds: virtual ? 0 : 20, end: 0)
        let builtIn: FixtureSet
        do { builtIn = try FixtureSet.embedded() } catch { throw TraceError("the built-in fixtures: \(error)", file: trace.path) }
        let builtInApp = builtIn.settings.json
        var start = Fixtures(users: .array([]), app: builtInApp, authKey: builtIn.settings.authKey)
        start.load(users: builtIn.directory.json["users"], app: nil)
        start.load(users: trace.fixtures["users"], app: trace.fixtures["app"])
        startFixtures = start
        fixtures = start
        var differences = JSONObject()
        for (key, value) in start.app.objectValue ?? JSONObject() where builtInApp[key] != value && !Self.isRedacted(value) {
            differences[key] = value
        }
        recording.app = differences.isEmpty ? nil : .object(differences)
        if start.users != builtIn.directory.json["users"] {
            let load = ServerShorthand.step(method: "POST", path: "/control/fixtures", body: ["users": start.users])
            try check(load, field: "fixtures.users", line: 1)
            recording.moments.append(Recording.Moment(at: 0, action: load, line: 1))
        }
        scan()
    }

    /// Names, login replies and connection ends, which later entries need to know first.
    /// A connection is named after its owner (``TraceView/owner(of:)``) when it first appears.
    private mutating func scan() {
        let view = TraceView(entries: trace.lines.map(\.entry), origin: trace.start)
        var used: [String: Int] = [:]
        var pendingLogins: [String: JSONValue] = [:]
        for line in trace.lines {
            let entry = line.entry
            guard let conn = entry.connection?.description else { continue }
            if names[conn] == nil, let uid = view.owner(of: conn), !uid.isEmpty {
                let base = Self.wireName(uid)
                used[base, default: 0] += 1
                names[conn] = used[base]! == 1 ? base : "\(base)-\(used[base]!)"
            }
            guard entry.kind == .in || entry.kind == .out, let frame = entry.frame else { continue }
            switch entry.kind {
            case .in where frame["op"]?.stringValue == "login":
                pendingLogins[conn] = frame["id"]
            case .out where frame["id"] != nil && frame["id"] == pendingLogins[conn]:
                loginReplies[conn + "/" + (frame["id"]?.description ?? "")] = frame
                pendingLogins[conn] = nil
            default:
                break
            }
        }
        for end in view.connectionEnds() where ends[end.connection] == nil { ends[end.connection] = end }
    }

    private mutating func run() throws(TraceError) {
        for line in trace.lines {
            let entry = line.entry
            let at = line.at
            let conn = entry.connection?.description
            let name = conn.map { names[$0] ?? $0 } ?? ""
            let text = entry.text ?? ""
            if entry.kind == .close, text == "server closes: server shutting down" { break }
            recording.end = max(recording.end, at)
            if let conn, entry.kind != .open, entry.kind != .fault, received[conn] == nil {
                throw TraceError("'conn' names \(conn), which no earlier 'open' entry opened", file: trace.path, line: line.number)
            }
            switch entry.kind {
            case .open:
                try act(["wire": .string(name)], field: "conn", at: latency.sent(readAt: at, uid: nil, deviceId: nil),
                        line: line.number)
                received[conn ?? ""] = 0
            case .in:
                try act(try send(entry, wire: name, line: line.number), field: "frame",
                        at: latency.sent(readAt: at, uid: entry.uid, deviceId: entry.deviceId), line: line.number)
            case .out:
                guard let conn, let frame = entry.frame else { continue }
                received[conn, default: 0] += 1
                guard !FramePattern.isSummary(frame) else { continue }
                if faultsInForce { uncertain.insert(conn) }
                guard uncertain.contains(conn) else {
                    var pattern = JSONObject([("nth", .integer(Int64(received[conn, default: 0])))])
                    for (path, value) in FramePattern.fields(of: frame) { pattern[path] = value }
                    try expect("\(name).frames", .object(pattern), field: "frame", at: at, line: line.number)
                    continue
                }
                var pattern = JSONObject()
                if let uid = entry.uid, !uid.isEmpty { pattern["to"] = .string(uid) }
                if let device = entry.deviceId { pattern["device"] = .string(device) }
                for (path, value) in FramePattern.fields(of: frame) { pattern["frame." + path] = value }
                try expect("server.sent", timed(pattern, at: at), field: "frame", at: at, line: line.number)
            case .fault where text.hasPrefix("drop") || text.hasPrefix("upgrade: login attempt") && text.hasSuffix(" reset"):
                if let conn { droppedByFault.insert(conn) }
            case .close:
                guard let conn, !ended.contains(conn), let end = ends[conn] else { continue }
                ended.insert(conn)
                try closed(end, wire: name, dropped: droppedByFault.contains(conn), at: at, line: line.number)
            case .control:
                try control(entry, at: at, line: line.number)
            case .fault:
                continue
            }
        }
        for (conn, name) in received.keys.sorted(by: Self.connectionOrder).map({ ($0, names[$0] ?? $0) })
            where !uncertain.contains(conn) {
            recording.finalChecks["\(name).frames"] = ["count": .integer(Int64(received[conn, default: 0]))]
            recording.finalChecks["\(name).open"] = .bool(!ended.contains(conn))
        }
    }

    // MARK: Entries

    /// The step that sends an inbound frame again: the request as recorded, with the
    /// secrets a replay needs; text that is not a request object goes as it was.
    private func send(_ entry: TraceLog.Entry, wire: String, line: Int) throws(TraceError) -> JSONValue {
        guard var frame = entry.frame else {
            return ["\(wire).sendText": .string(entry.text ?? "")]
        }
        if FramePattern.isSummary(frame) {
            throw TraceError("this frame was kept only as a summary (it is longer than a trace keeps whole); "
                + "record with `mockchat serve --record FILE`, which keeps every frame", file: trace.path, line: line)
        }
        let id = frame["id"]
        guard frame.objectValue != nil, id?.stringValue != nil || id?.intValue != nil else {
            return ["\(wire).sendText": .string(frame.description)]
        }
        if frame["op"]?.stringValue == "login", let conn = entry.connection?.description {
            frame = unredacted(login: frame, reply: loginReplies[conn + "/" + (id?.description ?? "")])
        }
        return ["\(wire).send": frame]
    }

    /// A login frame with its redacted secrets replaced by working ones when the
    /// recorded login got past authentication.
    private func unredacted(login frame: JSONValue, reply: JSONValue?) -> JSONValue {
        guard var object = frame.objectValue else { return frame }
        let error = reply?["error"]?["errorCode"]?.stringValue
        guard error != "ERR_AUTH_FAILED" else { return frame }
        if let key = object["authKey"], Self.isRedacted(key) { object["authKey"] = .string(fixtures.authKey) }
        if let token = object["token"], Self.isRedacted(token),
           let uid = reply?["result"]?["user"]?["uid"]?.stringValue ?? object["uid"]?.stringValue,
           let real = fixtures.tokens[uid] {
            object["token"] = .string(real)
        }
        return .object(object)
    }

    /// A connection's end: the client's close or drop is its action; every end is
    /// expected with who ended it, the code and the time.
    private mutating func closed(_ end: TraceView.ConnectionEnd, wire: String, dropped: Bool, at: Int64,
                                 line: Int) throws(TraceError) {
        switch end.by {
        case "client": try act(["\(wire).close": end.code], field: "code", at: at, line: line)
        case "drop" where !dropped: try act(["\(wire).drop": .object(JSONObject())], field: "conn", at: at, line: line)
        default: break
        }
        var pattern = JSONObject([("by", .string(end.by)), ("code", end.code)])
        if let uid = end.uid, !uid.isEmpty { pattern["uid"] = .string(uid) }
        if let device = end.device { pattern["device"] = .string(device) }
        try expect("server.closed", timed(pattern, at: at), field: "code", at: at, line: line)
        guard !uncertain.contains(end.connection) else { return }
        if end.by == "server" { try expect("\(wire).closeCode", end.code, field: "code", at: at, line: line, single: true) }
        try expect("\(wire).open", false, field: "conn", at: at, line: line, single: true)
    }

    /// A control entry as the request that made it; a clock advance is only time passing.
    private mutating func control(_ entry: TraceLog.Entry, at: Int64, line: Int) throws(TraceError) {
        guard let route = entry.route, let space = route.firstIndex(of: " ") else {
            throw TraceError("this control entry has no 'route' (\(entry.text ?? "no text")): "
                + "it was recorded by a server older than `mockchat serve --record`", file: trace.path, line: line)
        }
        let method = String(route[..<space]), path = String(route[route.index(after: space)...])
        var body = entry.frame ?? .null
        latency.note(method: method, path: path, body: body, at: at)
        switch path {
        case "/control/clock/advance":
            recording.moments.append(Recording.Moment(at: at, action: nil, line: line))
            return
        case "/control/reset":
            fixtures = startFixtures
            faultsInForce = false
        case "/control/fixtures":
            body = loaded(body)
        default:
            // A fault or any other misbehaviour: in force until cleared or reset.
            faultsInForce = !(method == "DELETE" && path == "/control/faults")
        }
        try act(ServerShorthand.step(method: method, path: path, body: body), field: "frame", at: at, line: line)
    }

    /// The body that loads the recorded fixtures again: only what changed, secrets a replay can use.
    private mutating func loaded(_ load: JSONValue) -> JSONValue {
        let before = fixtures
        fixtures.load(users: load["users"], app: load["app"])
        var body = JSONObject()
        if fixtures.users != before.users { body["users"] = fixtures.users }
        var app = JSONObject()
        for (key, value) in fixtures.app.objectValue ?? JSONObject() where before.app[key] != value && !Self.isRedacted(value) {
            app[key] = value
        }
        if !app.isEmpty || body.isEmpty { body["app"] = .object(app) }
        return .object(body)
    }

    // MARK: Moments

    /// Adds the step `action`, made from the entry's `field`, once it reads as a scenario step.
    /// An action earlier than the latest moment (sent before a latency let the server
    /// read it) goes in its place in time.
    private mutating func act(_ action: JSONValue, field: String, at: Int64, line: Int) throws(TraceError) {
        try check(action, field: field, line: line)
        let index = recording.moments.lastIndex { $0.at <= at }.map { $0 + 1 } ?? 0
        recording.moments.insert(Recording.Moment(at: at, action: action, line: line), at: index)
    }

    /// A step made from the entry on `line` that the scenario reader refuses is the
    /// recording's fault: the error names the line and the entry's field.
    private func check(_ step: JSONValue, field: String, line: Int) throws(TraceError) {
        do {
            _ = try ScenarioLoader.step(step, number: 1)
        } catch {
            throw TraceError("the entry's '\(field)' does not make a valid step (\(error.message)): "
                + String(step.description.prefix(200)), file: trace.path, line: line)
        }
    }

    /// Adds an assertion, made from the entry's `field`, to the latest moment, or to a new
    /// time-only moment when the server acted later on its own (a timer). `single`: the
    /// key holds one value, else a list.
    private mutating func expect(_ key: String, _ value: JSONValue, field: String, at: Int64, line: Int,
                                 single: Bool = false) throws(TraceError) {
        try check(["expect": [key: single ? value : [value]]], field: field, line: line)
        if recording.moments.isEmpty || at - recording.moments[recording.moments.count - 1].at > recording.toleranceMilliseconds {
            recording.moments.append(Recording.Moment(at: at, action: nil, line: line))
        }
        let last = recording.moments.count - 1
        if single {
            recording.moments[last].expectations[key] = value
        } else {
            let list = recording.moments[last].expectations[key]?.arrayValue ?? []
            recording.moments[last].expectations[key] = .array(list + [value])
        }
    }

    // MARK: Helpers

    /// The pattern with its time, and the tolerance of a system-clock recording.
    private func timed(_ pattern: JSONObject, at: Int64) -> JSONValue {
        var pattern = pattern
        pattern["at"] = .double(Double(at) / 1000)
        if recording.toleranceMilliseconds > 0 { pattern["tolerance"] = .string("\(recording.toleranceMilliseconds)ms") }
        return .object(pattern)
    }

    static func isRedacted(_ value: JSONValue) -> Bool { value.stringValue == TraceLog.redacted }

    /// A uid as a scenario name: letters, digits, `_` and `-`.
    static func wireName(_ uid: String) -> String {
        let kept = uid.unicodeScalars.map { scalar -> Character in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", "-": Character(scalar)
            default: "-"
            }
        }
        // At most 64 characters: a YAML key longer than 1,024 is not a key (a 5,000-character
        // uid made a scenario that did not load; found by `mockchat fuzz --mode inputs`).
        let name = String(kept.prefix(64))
        return name == "server" || name.first == "-" ? "u" + name : name
    }

    /// `c2` before `c10`.
    static func connectionOrder(_ left: String, _ right: String) -> Bool {
        (Int(left.dropFirst()) ?? 0, left) < (Int(right.dropFirst()) ?? 0, right)
    }
}

extension RecordingReader.Fixtures {
    /// Takes a load's users and app settings (either may be absent); a redacted token
    /// becomes `<uid>-token`, the built-in fixtures' convention, so that logins and
    /// fixture loads of the replay agree.
    mutating func load(users newUsers: JSONValue?, app newApp: JSONValue?) {
        if let list = newUsers?.arrayValue {
            tokens = [:]
            users = .array(list.map { user in
                guard var object = user.objectValue, let uid = object["uid"]?.stringValue else { return user }
                if let token = object["authToken"] {
                    let real = RecordingReader.isRedacted(token) ? "\(uid)-token" : token.stringValue ?? ""
                    object["authToken"] = .string(real)
                    tokens[uid] = real
                }
                return .object(object)
            })
        }
        if let overrides = newApp?.objectValue, var merged = app.objectValue {
            for (key, value) in overrides { merged[key] = value }
            app = .object(merged)
            if let key = overrides["authKey"]?.stringValue, !RecordingReader.isRedacted(.string(key)) { authKey = key }
        }
    }
}
