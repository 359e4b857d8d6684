import ChatProtocol
import Foundation
import ReferenceClient

/// Checking `subject.property: value` against what clients observed and what the
/// server's trace recorded. Each check returns nil when it holds, or a description of
/// what was found instead. Times (`at`) are scenario seconds; they match within
/// `tolerance` (default 1 ms).
extension ScenarioSession {
    func evaluate(_ expectation: Expectation) throws(ScenarioError) -> String? {
        if expectation.subject == "server" { return try evaluateServer(expectation.property, expectation.value) }
        let name = expectation.subject
        if let wire = wires[name] { return try evaluateWire(wire, expectation.property, expectation.value) }
        let client = try client(name)
        let expected = expectation.value
        switch expectation.property {
        case "status":
            return same(try client.inspect().status.rawValue, expected)
        case "backgroundTaskEnabled":
            return same(try client.inspect().backgroundTaskEnabled, expected)
        case "loggedInUser":
            return same(try client.inspect().loggedInUser, expected)
        case "connectionEvents":
            let names = client.observations.compactMap { $0.connectionEvent }
            guard let wanted = expected.arrayValue?.compactMap(\.stringValue) else {
                throw ScenarioError("connectionEvents takes a list of event names")
            }
            return names == wanted ? nil : "\(names)"
        case "connectAttempts":
            let times = client.observations.filter(\.isAttempt).map { seconds($0.time) }
            return try matchTimes(times, expected)
        case "received":
            return try matchEvents(client, expected)
        case "result":
            return try matchResult(try lastResult(name), expected)
        case "lastSeenText":
            guard case .success(.user(let user))? = try lastResult(name) else {
                return "the last call did not return a user"
            }
            let text = SDKStateMachine.lastSeenText(now: loop.clock.now, lastActiveAt: user.lastActiveAt)
            return same(text, expected)
        default:
            throw ScenarioError("unknown client property '\(expectation.property)'")
        }
    }

    // MARK: Clients

    /// `received: {event: online|offline, uid, at, listener, count, <user field>: value}` or a list of them.
    private func matchEvents(_ client: ScenarioClient, _ expected: JSONValue) throws(ScenarioError) -> String? {
        let patterns = expected.arrayValue ?? [expected]
        let events = client.observations.compactMap(\.userEvent)
        for pattern in patterns {
            guard let fields = pattern.objectValue else { throw ScenarioError("received takes a mapping or a list of them") }
            let matching = events.filter { event in
                fields.allSatisfy { key, value in
                    switch key {
                    case "count": true
                    case "event": value.stringValue == event.change
                    case "listener": value.stringValue == event.listener
                    case "at": timeMatches(seconds(event.time), value, tolerance: fields["tolerance"])
                    case "tolerance": true
                    default: event.user.json[key].map { same($0, value) == nil } ?? false
                    }
                }
            }
            if let count = fields["count"]?.intValue {
                if matching.count != Int(count) { return "\(matching.count) matching events of \(describe(events))" }
            } else if matching.isEmpty {
                return "no matching event among \(describe(events))"
            }
        }
        return nil
    }

    private func describe(_ events: [Observation.UserEvent]) -> String {
        events.isEmpty ? "none" : events.map { "\($0.change) \($0.user.uid) at \(seconds($0.time))" }.joined(separator: ", ")
    }

    /// `result: {error: CODE, description: text}` or `{ok: true}`, `{uids: [...]}`,
    /// `{user: {field: value}}`, `{next: null}`, `{status: connected}`, `{flag: true}`.
    private func matchResult(_ result: CallResult?, _ expected: JSONValue) throws(ScenarioError) -> String? {
        guard let result else { return "the last call has not completed" }
        guard let fields = expected.objectValue else { throw ScenarioError("result takes a mapping") }
        for (key, value) in fields {
            let mismatch: String?
            switch (key, result) {
            case ("error", .failure(let error)): mismatch = same(error.code, value)
            case ("description", .failure(let error)): mismatch = same(error.description, value)
            case ("ok", _): mismatch = same(result.isSuccess, value)
            case ("uids", .success(.users(let page))): mismatch = same(page.users.map(\.uid), value)
            case ("next", .success(.users(let page))): mismatch = same(page.next, value)
            case ("status", .success(.status(let status))): mismatch = same(status.rawValue, value)
            case ("flag", .success(.flag(let flag))): mismatch = same(flag, value)
            case ("user", .success(.user(let user))):
                guard let wanted = value.objectValue else { throw ScenarioError("result.user takes a mapping") }
                mismatch = wanted.lazy.compactMap { field, expected in
                    user.json[field].flatMap { self.same($0, expected) }.map { "\(field) = \($0)" }
                        ?? (user.json[field] == nil ? "no field \(field)" : nil)
                }.first
            default: mismatch = "\(result)"
            }
            if let mismatch { return "\(key): \(mismatch)" }
        }
        return nil
    }

    // MARK: Wire clients

    /// `open: true`, `closeCode: 4001`, `frames: {field.path: value, count}` where field
    /// paths reach into the frame (`event`, `user.uid`, `error.errorCode`, `id`).
    private func evaluateWire(_ wire: WireClient, _ property: String, _ expected: JSONValue) throws(ScenarioError) -> String? {
        switch property {
        case "open":
            return same(wire.isOpen, expected)
        case "closeCode":
            return same(wire.closeInfo?.received.map { JSONValue.integer(Int64($0)) } ?? .null, expected)
        case "frames":
            for pattern in expected.arrayValue ?? [expected] {
                guard let fields = pattern.objectValue else { throw ScenarioError("frames takes a mapping or a list of them") }
                let matching = wire.frames.filter { frame in
                    fields.allSatisfy { key, value in
                        switch key {
                        case "count": return true
                        case "at": return timeMatches(seconds(frame.time), value, tolerance: fields["tolerance"])
                        case "tolerance": return true
                        default:
                            var node: JSONValue? = frame.message
                            for part in key.split(separator: ".") { node = node?[String(part)] }
                            return node.map { same($0, value) == nil } ?? false
                        }
                    }
                }
                if let count = fields["count"]?.intValue {
                    if matching.count != Int(count) { return "\(matching.count) matching frames of \(wire.frames.count)" }
                } else if matching.isEmpty {
                    return "no matching frame; last: \(wire.frames.suffix(3).map { $0.message.description.prefix(160) })"
                }
            }
            return nil
        default:
            throw ScenarioError("unknown wire property '\(property)' (open, closeCode, frames)")
        }
    }

    // MARK: Server

    private func evaluateServer(_ property: String, _ expected: JSONValue) throws(ScenarioError) -> String? {
        switch property {
        case "online":
            let reply = try server.control(method: "GET", path: "/control/presence", body: .null)
            return same(reply.body["online"] ?? .null, expected)
        case "connections":
            let reply = try server.control(method: "GET", path: "/control/connections", body: .null)
            var sessions = reply.body["connections"]?.arrayValue ?? []
            if let uid = expected["uid"]?.stringValue { sessions = sessions.filter { $0["uid"]?.stringValue == uid } }
            return same(Int64(sessions.count), expected["count"] ?? expected)
        case "closed":
            return try matchTrace(try serverTrace().filter { $0["kind"]?.stringValue == "close" && $0["code"] != nil }, expected) { entry, key, value in
                switch key {
                case "code": entry["code"] == value
                case "uid": entry["uid"] == value
                case "device": entry["device"] == value
                default: nil
                }
            }
        case "sent":
            return try matchTrace(try serverTrace().filter { $0["kind"]?.stringValue == "out" }, expected) { entry, key, value in
                switch key {
                case "to": entry["uid"] == value
                case "event": entry["frame"]?["event"] == value
                case "uid": entry["frame"]?["user"]?["uid"] == value
                case "error": entry["frame"]?["error"]?["errorCode"] == value
                default: nil
                }
            }
        case "received":
            return try matchTrace(try serverTrace().filter { $0["kind"]?.stringValue == "in" }, expected) { entry, key, value in
                switch key {
                case "from": entry["uid"] == value
                case "op": entry["frame"]?["op"] == value
                default: nil
                }
            }
        default:
            throw ScenarioError("unknown server property '\(property)' (online, connections, closed, sent, received)")
        }
    }

    /// Matches trace entries against `{field: value, at, tolerance, count}` or a list of them.
    private func matchTrace(_ entries: [JSONValue], _ expected: JSONValue,
                            field: (JSONValue, String, JSONValue) -> Bool?) throws(ScenarioError) -> String? {
        for pattern in expected.arrayValue ?? [expected] {
            guard let fields = pattern.objectValue else { throw ScenarioError("server checks take a mapping") }
            var matching: [JSONValue] = []
            for entry in entries {
                var holds = true
                for (key, value) in fields where key != "count" && key != "tolerance" {
                    if key == "at" {
                        let time = (entry["t"]?.doubleValue ?? 0) - server.traceOrigin
                        holds = holds && timeMatches(time, value, tolerance: fields["tolerance"])
                    } else if let result = field(entry, key, value) {
                        holds = holds && result
                    } else {
                        throw ScenarioError("unknown field '\(key)' in a server check")
                    }
                }
                if holds { matching.append(entry) }
            }
            if let count = fields["count"]?.intValue {
                if matching.count != Int(count) { return "\(matching.count) matching trace entries" }
            } else if matching.isEmpty {
                let recent = entries.suffix(4).map { $0.description.prefix(200) }.joined(separator: "\n          ")
                return "no matching trace entry; last of \(entries.count) candidates:\n          \(recent)"
            }
        }
        return nil
    }

    // MARK: Values and times

    private func timeMatches(_ actual: Double, _ expected: JSONValue, tolerance: JSONValue?) -> Bool {
        guard let wanted = try? ScenarioLoader.duration(expected) else { return false }
        // The run's tolerance (1 ms; in wall-clock mode the user's) unless the check
        // gives its own; in wall-clock mode the larger of the two.
        let base = Int64((self.tolerance * 1000).rounded())
        let slack = tolerance.flatMap { try? ScenarioLoader.duration($0) }.map { timeline.wallClock ? max($0, base) : $0 } ?? base
        return abs(Int64((actual * 1000).rounded()) - wanted) <= slack
    }

    /// `connectAttempts: [0, 0.05, 0.3]` or `{at: [...], tolerance: 0.01, after: 10}`.
    private func matchTimes(_ actual: [Double], _ expected: JSONValue) throws(ScenarioError) -> String? {
        let list = expected.arrayValue ?? expected["at"]?.arrayValue
        guard let list else { throw ScenarioError("connectAttempts takes a list of times or {at: [...]}") }
        let after = expected["after"].flatMap { try? ScenarioLoader.duration($0) }.map { Double($0) / 1000 } ?? -1
        let times = actual.filter { $0 > after }
        let tolerance = expected["tolerance"]
        guard times.count >= list.count,
              zip(times, list).allSatisfy({ timeMatches($0, $1, tolerance: tolerance) }) else {
            return "attempts at \(times.map { String(format: "%.3f", $0) })"
        }
        if expected["exact"]?.boolValue == true, times.count != list.count {
            return "\(times.count) attempts: \(times.map { String(format: "%.3f", $0) })"
        }
        return nil
    }

    func same(_ actual: String?, _ expected: JSONValue) -> String? {
        same(actual.map { JSONValue.string($0) } ?? .null, expected)
    }

    func same(_ actual: Bool, _ expected: JSONValue) -> String? { same(JSONValue.bool(actual), expected) }

    func same(_ actual: Int64, _ expected: JSONValue) -> String? { same(JSONValue.integer(actual), expected) }

    func same(_ actual: [String], _ expected: JSONValue) -> String? {
        same(JSONValue.array(actual.map { .string($0) }), expected)
    }

    /// Equality with numbers compared by value (1 == 1.0).
    func same(_ actual: JSONValue, _ expected: JSONValue) -> String? {
        if let a = actual.doubleValue, let b = expected.doubleValue { return abs(a - b) < 1e-9 ? nil : actual.description }
        return actual == expected ? nil : actual.description
    }
}
