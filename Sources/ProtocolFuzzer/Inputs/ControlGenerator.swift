import ChatProtocol

/// Control API requests for every route (docs/PROTOCOL.md, "Control API"): a valid
/// request with one field of its body replaced by a value of ``FuzzValues``, removed
/// or joined by another; a body that is broken, not an object, deep or large; a query
/// with extreme numbers. Each must be answered with a 2xx or a 4xx, and a 4xx must
/// change nothing.
struct ControlGenerator: Sendable {
    /// Each route with bodies it accepts.
    static let routes: [(method: String, path: String, bodies: [JSONValue])] = [
        ("GET", "/control/health", [[:]]),
        ("POST", "/control/reset", [[:], ["clock": 1_700_000_100]]),
        ("POST", "/control/fixtures", [
            ["app": ["clientKickControl": true, "heartbeatTimeout": 45]],
            ["users": [["uid": "zoe", "name": "Zoe", "authToken": "zoe-token", "friends": ["yan"]], ["uid": "yan", "blocked": ["zoe"]]]],
            ["app": ["devicePolicy": ["mobileDevicesPerUser": 2]]],
        ]),
        ("GET", "/control/clock", [[:]]),
        ("POST", "/control/clock/advance", [["ms": 1500], ["seconds": 0.5]]),
        ("POST", "/control/settle", [[:]]),
        ("GET", "/control/connections", [[:]]),
        ("GET", "/control/presence", [[:]]),
        ("GET", "/control/faults", [[:]]),
        ("POST", "/control/faults", [
            ["fault": "delay", "ms": 250, "uid": "bob"], ["fault": "drop", "uid": "bob"],
            ["fault": "link", "uid": "bob", "direction": "in", "dropPercent": 50, "seed": 3, "closeFrame": true],
            ["fault": "refuseConnections"], ["fault": "blackhole", "uid": "bob", "enabled": false],
            ["fault": "stall", "enabled": false],
        ]),
        ("DELETE", "/control/faults", [[:]]),
        ("POST", "/control/push", [
            ["uid": "bob", "event": ["event": "x"]], ["uid": "bob", "close": ["code": 4000, "reason": "x"]],
            ["connection": "c1", "close": ["frame": false]],
        ]),
        ("GET", "/control/trace", [[:]]),
    ]

    static let queries = ["", "?since=0&limit=10", "?since=1e308", "?limit=-1", "?limit=99999999999999999999",
                          "?since=-5&limit=0", "?limit=20001", "?since=%00"]

    func generate(_ random: inout FuzzRandom) -> WireInput {
        let route = random.pick(Self.routes)
        var path = route.path
        var body: String
        var what: String
        switch random.below(10) {
        case 0...6:
            let (value, label) = FuzzValues.mutate(random.pick(route.bodies), &random)
            body = value.description
            what = "field " + label
        case 7:
            body = FuzzValues.rawText(&random)
            what = "raw body"
        case 8:
            body = random.pick(route.bodies).description
            path += random.pick(Self.queries)
            what = "query"
        default:
            body = FuzzValues.mutate(random.pick(route.bodies), &random).value.description
            what = "method"
            return Self.request("control/\(route.method) \(route.path) \(what)", method: random.pick(["PUT", "PATCH", "GET", "POST"]),
                                path: path, body: body)
        }
        return Self.request("control/\(route.method) \(route.path) \(what)", method: route.method, path: path, body: body)
    }

    /// The input that sends `method path` with `body` (labelled `label`).
    static func request(_ label: String, method: String, path: String, body: String) -> WireInput {
        let bytes = Array(body.utf8)
        let head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
        return WireInput(stage: .control, label: label, bytes: Array(head.utf8) + bytes,
                         expectation: .reply)
    }
}
