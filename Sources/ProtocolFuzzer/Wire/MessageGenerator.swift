import ChatProtocol

/// Random and mutated requests for the session connection: well-formed requests of
/// every op, the same with fields removed, retyped or added, invalid ids, deep
/// nesting, duplicate keys, payloads at the size limit, JSON that is not a request,
/// broken JSON, and byte-level mutations whose meaning is left to chance.
struct MessageGenerator: Sendable {
    static let maxMessageBytes = 65_536

    private static let uids = ["alice", "bob", "carol", "dave", "erin", "nobody", "oscar"]
    private static let strings: [JSONValue] = ["", "x", "online", "offline", "away", "mobile", "watch", "after:bob",
                                               "page2", "é✓ü", "alice", "ping", "\u{0}", "mockchat-dev-key"]
    private static let fieldNames = ["id", "op", "uid", "authKey", "token", "deviceId", "platform", "presence",
                                     "reconnect", "reconnectKickEnable", "status", "limit", "cursor", "extra"]

    mutating func generate(_ random: inout FuzzRandom) -> WireInput {
        switch random.weighted([(0, 46), (1, 12), (2, 12), (3, 12), (4, 6), (5, 2), (6, 5), (7, 5)]) {
        case 0: return structured(&random)
        case 7: return compactPing(&random)
        case 1: return notAnObject(&random)
        case 2: return brokenJSON(&random)
        case 3: return mutatedBytes(&random)
        case 4: return deep(&random)
        case 5: return atSizeLimit(&random)
        default: return withDuplicateKey(&random)
        }
    }

    // MARK: Requests with a known meaning

    private func structured(_ random: inout FuzzRandom) -> WireInput {
        var object = template(&random)
        let mutations = random.weighted([(0, 40), (1, 35), (2, 15), (3, 10)])
        for _ in 0..<mutations { mutate(&object, &random) }
        let value = JSONValue.object(object)
        var text = serialize(value)
        if random.chance(0.1) { text = Array(random.pick([" ", "\n", "\t ", "\r\n"]).utf8) + text + Array(" \n".utf8) }
        var input = message("message/request", text, meaning: .value(value))
        if random.chance(0.12) {
            input.fragments = random.int(in: 2...4)
            input.pingBetweenFragments = random.chance(0.3)
            input.label = "message/fragmented"
        }
        return input
    }

    private func template(_ random: inout FuzzRandom) -> JSONObject {
        var object = JSONObject([("id", randomID(&random, valid: true))])
        switch random.weighted([("ping", 25), ("logout", 6), ("users.get", 18), ("users.list", 18), ("login", 25),
                                ("unknown", 8)]) {
        case "ping": object["op"] = "ping"
        case "logout": object["op"] = "logout"
        case "users.get":
            object["op"] = "users.get"
            object["uid"] = .string(random.pick(Self.uids))
        case "users.list":
            object["op"] = "users.list"
            if random.chance(0.5) { object["status"] = random.chance(0.5) ? "online" : "offline" }
            if random.chance(0.5) { object["limit"] = .integer(Int64(random.int(in: 1...100))) }
            if random.chance(0.3) { object["cursor"] = .string("after:" + random.pick(Self.uids)) }
        case "login":
            object["op"] = "login"
            if random.chance(0.2) {
                object["token"] = .string(random.pick(Self.uids) + (random.chance(0.8) ? "-token" : "-guess"))
            } else {
                object["uid"] = .string(random.pick(Self.uids))
                object["authKey"] = random.chance(0.8) ? "mockchat-dev-key" : "wrong-key"
            }
            object["deviceId"] = "fuzz-device"
            object["platform"] = .string(random.pick(["mobile", "desktop", "web"]))
            object["presence"] = ["mode": "none"]
        default:
            object["op"] = .string(random.pick(["dance", "users.delete", "", "LOGIN", "ping ", "users"]))
        }
        return object
    }

    private func mutate(_ object: inout JSONObject, _ random: inout FuzzRandom) {
        switch random.below(5) {
        case 0:
            guard let key = object.keys.isEmpty ? nil : random.pick(object.keys) else { return }
            object[key] = nil
        case 1, 2:
            object[random.pick(Self.fieldNames)] = randomValue(&random, depth: 0)
        case 3:
            object["op"] = .string(random.pick(["ping", "logout", "users.get", "users.list", "login"]))
        default:
            object["id"] = randomID(&random, valid: random.chance(0.3))
        }
    }

    private func randomID(_ random: inout FuzzRandom, valid: Bool) -> JSONValue {
        if valid {
            return random.pick([.integer(Int64(random.int(in: 1...9_999))), 0, -7, .integer(.max), .integer(.min),
                                "r-1", "", "ключ", .string("id-\(random.below(1000))")])
        }
        return random.pick([1.5, 2.0, true, false, .null, [], [:], [1], 1e300])
    }

    private func randomValue(_ random: inout FuzzRandom, depth: Int) -> JSONValue {
        switch random.below(depth > 1 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(random.chance(0.5))
        case 2: return random.pick([0, 1, -1, 30, 100, 101, .integer(.max), .integer(.min)])
        case 3: return random.pick([10.0, 1.5, -0.5, 1e300])
        case 4: return random.pick(Self.strings)
        case 5:
            return .array((0..<random.below(3)).map { _ in
                random.chance(0.5) ? .string(random.pick(["admin", "moderator"])) : randomValue(&random, depth: depth + 1)
            })
        default:
            return random.pick([[:], ["mode": "all"], ["mode": "friends"], ["mode": "none"], ["mode": "everyone"],
                                ["mode": "roles", "roles": ["admin"]], ["mode": "roles", "roles": [1]], ["mode": "roles"]])
        }
    }

    // MARK: Not requests

    private func notAnObject(_ random: inout FuzzRandom) -> WireInput {
        let fixed = ["42", "\"ping\"", "[1,2]", "null", "true", "[{\"id\":1,\"op\":\"ping\"}]", "", " ", "\n\t ",
                     "-0", "\"\\u00e9\"", "[]"]
        if random.chance(0.5) { return message("message/not-an-object", Array(random.pick(fixed).utf8), meaning: .notARequest) }
        // Printable junk, and now and then non-ASCII text, never starting with "{".
        var text: [UInt8] = []
        for _ in 0..<random.int(in: 1...60) {
            text += random.chance(0.1) ? Array(random.pick(["é", "✓", "😀", "ß"]).utf8) : [UInt8(random.int(in: 0x20...0x7E))]
        }
        while text.first.map({ $0 == UInt8(ascii: "{") || $0 == 0x20 }) ?? false { text.removeFirst() }
        return message("message/junk-text", text, meaning: .notARequest)
    }

    private func brokenJSON(_ random: inout FuzzRandom) -> WireInput {
        let request = serialize(.object(template(&random)))
        switch random.below(3) {
        case 0:
            // Every proper prefix of an object's text is incomplete JSON.
            return message("message/truncated", Array(request.prefix(random.int(in: 1...(request.count - 1)))),
                           meaning: .notARequest)
        case 1:
            let broken = ["{\"id\":1,\"op\":\"ping\",}", "{'id':1,'op':'ping'}", "{id:1,op:\"ping\"}",
                          "{\"id\":01,\"op\":\"ping\"}", "{\"id\":NaN,\"op\":\"ping\"}", "{\"id\":1,\"op\":\"ping\"} x",
                          "{\"id\":1,\"op\":\"ping\"}{\"id\":2,\"op\":\"ping\"}", "{\"id\":1 \"op\":\"ping\"}",
                          "{\"id\":1,\"op\":\"pi\u{1}ng\"}", "{\"id\":1,\"op\":\"ping\"/*c*/}", "{\"id\":+1,\"op\":\"ping\"}",
                          "{\"id\":1,\"op\":\"\\x70ing\"}", "{\"id\":1.,\"op\":\"ping\"}", "{\"id\":.5,\"op\":\"ping\"}"]
            return message("message/invalid-json", Array(random.pick(broken).utf8), meaning: .notARequest)
        default:
            var text = Array("{".utf8)
            for _ in 0..<random.int(in: 0...40) { text.append(UInt8(random.int(in: 0x20...0x7E))) }
            return message("message/brace-junk", text, meaning: .unknown)
        }
    }

    private func mutatedBytes(_ random: inout FuzzRandom) -> WireInput {
        var text = serialize(.object(template(&random)))
        for _ in 0..<random.int(in: 1...4) {
            let index = random.below(text.count)
            switch random.below(4) {
            case 0: text[index] = UInt8(random.int(in: 0x20...0x7E))
            case 1: text.insert(random.pick(Array("{}[]\",:\\0123456789eE.-tfn ".utf8)), at: index)
            case 2: if text.count > 1 { text.remove(at: index) }
            default: text[index] = random.byte()
            }
        }
        return message("message/mutated-bytes", text, meaning: .unknown)
    }

    // MARK: Limits

    /// Nesting around the request's depth limit of 32, inside a request or alone.
    private func deep(_ random: inout FuzzRandom) -> WireInput {
        let levels = random.pick([30, 31, 32, 33, 40, 200])
        var nested: JSONValue = random.chance(0.5) ? [] : 1
        for _ in 0..<levels { nested = random.chance(0.8) ? [nested] : ["k": nested] }
        if random.chance(0.3) {
            return message("message/deep-alone", serialize(nested), meaning: .value(nested))
        }
        var object = template(&random)
        object["deep"] = nested
        return message("message/deep-field", serialize(.object(object)), meaning: .value(.object(object)))
    }

    /// A request padded to exactly the message limit, or one byte over it. The pad is
    /// a field the server does not know, so the request means what it meant before.
    private func atSizeLimit(_ random: inout FuzzRandom) -> WireInput {
        let object = template(&random)
        let base = serialize(.object(object))
        let over = random.chance(0.5)
        let padding = Self.maxMessageBytes + (over ? 1 : 0) - base.count - 9  // "pad":"",
        let text = [UInt8(ascii: "{")] + Array("\"pad\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: padding)
            + Array("\",".utf8) + base.dropFirst()
        var input = message(over ? "message/over-limit" : "message/at-limit", text, meaning: .value(.object(object)))
        if over { input.expectation = .close([1009]) }
        if random.chance(0.3) { input.fragments = random.int(in: 2...5) }
        return input
    }

    /// `{"id":DIGITS,"op":"ping"}` with ids of 1 to 20 digits, some with a leading
    /// zero (not JSON) and some beyond 64 bits (whether that is still an integer id
    /// is not specified, so any documented answer will do).
    private func compactPing(_ random: inout FuzzRandom) -> WireInput {
        var digits = String(random.int(in: 1...9))
        for _ in 0..<random.below(20) { digits += String(random.below(10)) }
        if random.chance(0.15) { digits = "0" + digits }
        let text = Array("{\"id\":\(digits),\"op\":\"ping\"}".utf8)
        if digits.count > 1, digits.hasPrefix("0") { return message("message/compact-ping", text, meaning: .notARequest) }
        guard let id = Int64(digits) else { return message("message/compact-ping", text, meaning: .unknown) }
        return message("message/compact-ping", text, meaning: .value(["id": .integer(id), "op": "ping"]))
    }

    /// The same key twice; the last value counts (PROTOCOL.md §2).
    private func withDuplicateKey(_ random: inout FuzzRandom) -> WireInput {
        let object = template(&random)
        let key = random.pick(object.keys)
        let decoy = serialize(randomValue(&random, depth: 0))
        let text = Array("{\"\(key)\":".utf8) + decoy + [UInt8(ascii: ",")] + serialize(.object(object)).dropFirst()
        return message("message/duplicate-key", text, meaning: .value(.object(object)))
    }

    // MARK: Helpers

    private func message(_ label: String, _ text: [UInt8], meaning: WireInput.Meaning) -> WireInput {
        // Text that is not UTF-8 is a framing error, whatever it says.
        let valid = String(validating: text, as: UTF8.self) != nil
        return WireInput(stage: .message, label: valid ? label : label + "/invalid-utf8", bytes: text,
                         expectation: valid ? .reply : .close([1007]), meaning: meaning)
    }

    private func serialize(_ value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = []
        value.serialize(into: &bytes)
        return bytes
    }
}
