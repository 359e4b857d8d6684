import ChatProtocol
import Foundation
import MockChatServer
import ReferenceClient

/// Checking `subject.property: value` against what clients observed and what the
/// server's trace recorded. Each check returns nil when it holds, or a description of
/// what was found instead. Expected values are literals or matchers (``ValueMatcher``);
/// pattern keys may be paths (``ValuePath``). Times (`at`) are scenario seconds; they
/// match within `tolerance` (default 1 ms).
extension ScenarioSession {
    func evaluate(_ expectation: Expectation) throws(ScenarioError) -> String? {
        let name = expectation.subject, expected = expectation.value
        switch expectation.target {
        case .server(let property):
            return try evaluateServer(property, expected)
        case .wire(let property):
            guard let wire = wires[name] else { throw ScenarioError("no wire client named '\(name)'") }
            return try evaluateWire(wire, property, expected)
        case .client(let property):
            let client = try client(name)
            switch property {
            case .status:
                return same(try client.inspect().status.rawValue, expected)
            case .backgroundTaskEnabled:
                return same(try client.inspect().backgroundTaskEnabled, expected)
            case .loggedInUser:
                return same(try client.inspect().loggedInUser, expected)
            case .connectionEvents:
                return same(client.observations.compactMap { $0.connectionEvent }, expected)
            case .connectionListeners:
                return matchListenerCalls(client.observations.compactMap(\.listenerCall), expected)
            case .connectAttempts:
                return try matchTimes(client.observations.filter(\.isAttempt).map { seconds($0.time) }, expected)
            case .received:
                return try matchEvents(client, expected)
            case .result:
                return try matchResult(try lastResult(name), expected)
            case .lastSeenText:
                guard case .success(.user(let user))? = try lastResult(name) else {
                    return "the last call did not return a user"
                }
                return same(SDKStateMachine.lastSeenText(now: loop.clock.now, lastActiveAt: user.lastActiveAt), expected)
            }
        }
    }

    // MARK: Patterns

    /// Counts the candidates matching every field of each pattern (`{field: value, count, at, tolerance}`
    /// or a list of them); `value(candidate, key)` reads a field (nil: absent).
    private func matchPatterns<Candidate>(_ candidates: [Candidate], _ expected: JSONValue, noun: String,
                                          time: (Candidate) -> Double, value: (Candidate, String) -> JSONValue?,
                                          describe: ([Candidate]) -> String) throws(ScenarioError) -> String? {
        for pattern in expected.arrayValue ?? [expected] {
            guard let fields = pattern.objectValue else { throw ScenarioError("\(noun) checks take a mapping") }
            let matching = candidates.filter { candidate in
                fields.allSatisfy { key, wanted in
                    field(key, wanted, tolerance: fields["tolerance"], matches: candidate, time: time, value: value)
                }
            }
            if let count = fields["count"] {
                if !ValueMatcher.matches(.integer(Int64(matching.count)), count) {
                    return "\(matching.count) matching \(noun) (want \(count)) among \(describe(candidates))"
                }
            } else if matching.isEmpty {
                return "no matching \(noun) for \(pattern) among \(describe(candidates))"
            }
        }
        return nil
    }

    /// Whether `candidate` matches a pattern's field `key: wanted`: `at` within the
    /// pattern's `tolerance`, any other field by ``ValueMatcher``. `count`, `tolerance` and
    /// `nth` say how to match rather than what, and always hold.
    private func field<Candidate>(_ key: String, _ wanted: JSONValue, tolerance: JSONValue?, matches candidate: Candidate,
                                  time: (Candidate) -> Double, value: (Candidate, String) -> JSONValue?) -> Bool {
        switch key {
        case "count", "tolerance", "nth": true
        case "at": timeMatches(time(candidate), wanted, tolerance: tolerance)
        default: ValueMatcher.matches(value(candidate, key), wanted)
        }
    }

    // MARK: Clients

    /// `received: {event: online|offline, uid, at, listener, count, statusValue, <user field or path>: value}`
    /// or a list of them. User fields are read from the frame as the server sent it.
    private func matchEvents(_ client: ScenarioClient, _ expected: JSONValue) throws(ScenarioError) -> String? {
        let events = client.observations.compactMap(\.userEvent)
        return try matchPatterns(events, expected, noun: "events", time: { seconds($0.time) }, value: { event, key in
            switch key {
            case "event": .string(event.change)
            case "listener": .string(event.listener)
            case "statusValue": .integer(Int64(event.user.status.documentedRawValue))
            default: ValuePath(key)?.resolve(in: event.user.asReceived.value ?? event.user.json)
            }
        }, describe: { events in
            events.isEmpty ? "none"
                : events.map { "\($0.change) \($0.user.uid) at \(self.seconds($0.time))" }.joined(separator: ", ")
        })
    }

    /// `connectionListeners: {c1: [connecting, connected], c2: []}`: the exact events each
    /// named connection listener was called with, in order (a listener called twice for
    /// one change, or after its removal, shows as an extra entry).
    private func matchListenerCalls(_ calls: [Observation.ListenerCall], _ expected: JSONValue) -> String? {
        let mismatches = (expected.objectValue ?? JSONObject()).compactMap { listener, events -> String? in
            let received = calls.filter { $0.listener == listener }.map(\.name)
            return same(received, events).map { "listener \(listener) was called with \($0), expected \(events)" }
        }
        return mismatches.isEmpty ? nil : mismatches.joined(separator: "; ")
    }

    /// The last call's result as JSON, for `result:` paths: `{ok, error, description}`
    /// on failure, `{ok, user, statusValue}`, `{ok, users, uids, next}`, `{ok, status}`, `{ok, flag}`.
    func resultView(_ result: CallResult) -> JSONValue {
        var view = JSONObject([("ok", .bool(result.isSuccess))])
        switch result {
        case .failure(let error):
            view["error"] = .string(error.code)
            view["description"] = .string(error.description)
        case .success(.user(let user)):
            view["user"] = user.asReceived.value ?? user.json
            view["statusValue"] = .integer(Int64(user.status.documentedRawValue))
        case .success(.users(let page)):
            view["users"] = .array(page.users.map { $0.asReceived.value ?? $0.json })
            view["uids"] = .array(page.users.map { .string($0.uid) })
            view["next"] = page.next.map { .string($0) } ?? .null
        case .success(.status(let status)):
            view["status"] = .string(status.rawValue)
        case .success(.flag(let flag)):
            view["flag"] = .bool(flag)
        case .success(.none):
            break
        }
        return .object(view)
    }

    /// `result: {path: value, ...}`, e.g. `{error: ERR_X}`, `{users[0].uid: bob}`, `{user: {uid: bob}}`
    /// (a mapping against an object checks only the fields it lists),
    /// `{user: {contains: {status: online}}}`, `{description: {contains: "already"}}`.
    private func matchResult(_ result: CallResult?, _ expected: JSONValue) throws(ScenarioError) -> String? {
        guard let result else { return "the last call has not completed" }
        guard let fields = expected.objectValue else { throw ScenarioError("result takes a mapping") }
        let view = resultView(result)
        var mismatches: [String] = []
        for (key, wanted) in fields {
            guard let path = ValuePath(key) else { throw ScenarioError("'\(key)' is not a path") }
            let actual = path.resolve(in: view)
            // A literal mapping against an object (`user: {uid: bob}`) checks the fields it lists.
            let pattern: JSONValue = actual?.objectValue != nil && wanted.objectValue != nil && !ValueMatcher.isMatcher(wanted)
                ? ["contains": wanted] : wanted
            if !ValueMatcher.matches(actual, pattern) {
                let found = actual.map { "\($0.description.prefix(300))" } ?? "absent"
                mismatches.append("\(key) = \(found), expected \(wanted)")
            }
        }
        if mismatches.isEmpty { return nil }
        let absent = mismatches.contains { $0.contains(" = absent,") }
        return mismatches.joined(separator: "; ") + (absent ? " (the result is \(view.description.prefix(300)))" : "")
    }

    // MARK: Wire clients

    /// `open: true`, `closeCode: 4001`, `frames: {path: value, count, at}` where paths
    /// reach into the frame (`event`, `user.uid`, `error.errorCode`, `result.users[0].uid`).
    private func evaluateWire(_ wire: WireClient, _ property: Expectation.WireProperty,
                              _ expected: JSONValue) throws(ScenarioError) -> String? {
        switch property {
        case .open:
            return same(wire.isOpen, expected)
        case .closeCode:
            return same(wire.closeInfo?.received.map { JSONValue.integer(Int64($0)) } ?? .null, expected)
        case .frames:
            let patterns = expected.arrayValue ?? [expected]
            for pattern in patterns where pattern["nth"] != nil {
                if let mismatch = try matchFrame(of: wire, pattern) { return mismatch }
            }
            let others = patterns.filter { $0["nth"] == nil }
            guard !others.isEmpty else { return nil }
            return try matchFrames(wire.frames, .array(others), describe: { frames in
                "\(frames.count) frames; last: \(frames.suffix(3).map { String($0.message.description.prefix(160)) })"
            })
        }
    }

    /// `{nth: 3, path: value, at}`: the wire client's third frame, field by field; the
    /// mismatch names each field that differs and shows the frame. With `count` (0 or 1),
    /// how many of that one frame match: `{nth: 3, event: user.online, count: 0}` holds
    /// when the third frame is something else or never came.
    private func matchFrame(of wire: WireClient, _ pattern: JSONValue) throws(ScenarioError) -> String? {
        let nth = Int(pattern["nth"]?.intValue ?? 0)
        let frame = nth <= wire.frames.count ? wire.frames[nth - 1] : nil
        if pattern["count"] != nil {
            return try matchFrames(frame.map { [$0] } ?? [], pattern, describe: { _ in
                "frame \(nth) of \(wire.name): " + (frame.map { String($0.message.description.prefix(300)) } ?? "never arrived")
            })
        }
        guard let frame else {
            let last = wire.frames.last.map { ", the last: \($0.message.description.prefix(200))" } ?? ""
            return "frame \(nth) never arrived: \(wire.name) received \(wire.frames.count) frames\(last)"
        }
        let fields = pattern.objectValue ?? JSONObject()
        let differences = fields.filter { key, wanted in
            !field(key, wanted, tolerance: fields["tolerance"], matches: frame, time: frameTime, value: frameField)
        }.map { key, wanted in
            key == "at" ? "at = \(String(format: "%.3f", frameTime(frame))), expected \(wanted)"
                : "\(key) = \(frameField(frame, key).map { String($0.description.prefix(120)) } ?? "absent"), expected \(wanted)"
        }
        guard !differences.isEmpty else { return nil }
        return "frame \(nth) of \(wire.name) differs: " + differences.joined(separator: "; ")
            + "\n          the frame: \(frame.message.description.prefix(300))"
    }

    /// ``matchPatterns(_:_:noun:time:value:describe:)`` over a wire client's frames, with
    /// paths into the frame as fields.
    private func matchFrames(_ frames: [WireClient.Frame], _ expected: JSONValue,
                             describe: ([WireClient.Frame]) -> String) throws(ScenarioError) -> String? {
        try matchPatterns(frames, expected, noun: "frames", time: frameTime, value: frameField, describe: describe)
    }

    private func frameTime(_ frame: WireClient.Frame) -> Double { seconds(frame.time) }

    private func frameField(_ frame: WireClient.Frame, _ key: String) -> JSONValue? {
        ValuePath(key)?.resolve(in: frame.message)
    }

    // MARK: Server

    private func evaluateServer(_ property: Expectation.ServerProperty, _ expected: JSONValue) throws(ScenarioError) -> String? {
        switch property {
        case .online:
            let reply = try server.control(method: "GET", path: "/control/presence", body: .null)
            return same(reply.body["online"] ?? .null, expected)
        case .connections:
            let reply = try server.control(method: "GET", path: "/control/connections", body: .null)
            var sessions = reply.body["connections"]?.arrayValue ?? []
            if let uid = expected["uid"]?.stringValue { sessions = sessions.filter { $0["uid"]?.stringValue == uid } }
            let wanted = ValueMatcher.isMatcher(expected) ? expected : (expected["count"] ?? expected)
            return same(JSONValue.integer(Int64(sessions.count)), wanted)
        case .closed:
            let view = try traceView()
            let ends = view.connectionEnds()
            return try matchPatterns(ends, expected, noun: "connection ends", time: \.at, value: { end, key in
                switch key {
                case "by": .string(end.by)
                case "code": end.code
                case "uid": end.uid.map { .string($0) }
                case "device": end.device.map { .string($0) }
                default: nil
                }
            }, describe: { ends in ends.isEmpty ? "none" : ends.map(\.json.description).joined(separator: ", ") })
        case .sent, .received:
            let view = try traceView()
            let direction: TraceLog.Kind = property == .sent ? .out : .in
            let entries = view.entries.filter { $0.kind == direction }
            return try matchPatterns(entries, expected, noun: "trace entries", time: view.time, value: { entry, key in
                switch key {
                case "to", "from": view.uid(entry).map { .string($0) }
                case "device": view.device(entry).map { .string($0) }
                case "event": entry.frame?["event"]
                case "uid": entry.frame?["user"]?["uid"]
                case "error": entry.frame?["error"]?["errorCode"]
                case "op": entry.frame?["op"]
                default:
                    key.hasPrefix("frame.") ? entry.frame.flatMap { ValuePath(String(key.dropFirst(6)))?.resolve(in: $0) } : nil
                }
            }, describe: { entries in
                let recent = entries.filter { !TraceView.isKeepAlive($0) }.suffix(4).map { String($0.description.prefix(200)) }
                return "\(entries.count) candidates, last:\n          " + recent.joined(separator: "\n          ")
            })
        }
    }

    // MARK: Values and times

    private func timeMatches(_ actual: Double, _ expected: JSONValue, tolerance: JSONValue?) -> Bool {
        if ValueMatcher.isMatcher(expected) { return ValueMatcher.matches(.double(actual), expected) }
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

    func same(_ actual: [String], _ expected: JSONValue) -> String? {
        same(JSONValue.array(actual.map { .string($0) }), expected)
    }

    /// nil when `actual` matches `expected` (a literal, numbers by value at any depth, or matchers).
    func same(_ actual: JSONValue, _ expected: JSONValue) -> String? {
        ValueMatcher.matches(actual, expected) ? nil : actual.description
    }
}
