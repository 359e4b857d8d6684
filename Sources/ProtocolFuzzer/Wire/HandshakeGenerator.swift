import Foundation
import WireKit

/// HTTP requests in place of the WebSocket upgrade: valid ones, each rule of
/// PROTOCOL.md §14 broken in turn, the limits of §15 crossed, incomplete requests,
/// junk, and byte-level mutations of a valid upgrade.
struct HandshakeGenerator: Sendable {
    /// Every status §14 documents, for inputs whose exact answer is left to chance.
    static let documentedStatuses: Set<Int> = [101, 200, 400, 403, 404, 413, 426, 431, 501, 503, 505]

    mutating func generate(_ random: inout FuzzRandom) -> WireInput {
        let key = UpgradeRequest.key(random.bytes(16))
        var lines = UpgradeRequest(host: "127.0.0.1", key: key).lines
        func request(_ label: String, _ status: Set<Int>, _ lines: [String], terminator: String = "\r\n") -> WireInput {
            let text = lines.joined(separator: terminator) + terminator + terminator
            return WireInput(stage: .handshake, label: "handshake/" + label, bytes: Array(text.utf8), expectation: .status(status))
        }
        func header(_ name: String, _ value: String?) -> [String] {
            var copy = lines.filter { !$0.lowercased().hasPrefix(name.lowercased() + ":") }
            if let value { copy.append("\(name): \(value)") }
            return copy
        }
        switch random.below(30) {
        case 0, 1:
            return request("valid", [101], lines.shuffledTail(&random))
        case 2:
            lines[0] = "\(random.pick(["POST", "PUT", "DELETE", "HEAD", "OPTIONS", "get"])) /v1/ws HTTP/1.1"
            return request("method", [400], lines)
        case 3:
            lines[0] = "GET /v1/ws HTTP/1.0"
            return request("http-1.0", [400], lines)
        case 4:
            lines[0] = "GET /v1/ws \(random.pick(["HTTP/2.0", "HTTP/1.2", "HTTP/3.0", "HTTP/0.9"]))"
            return request("http-version", [505], lines)
        case 5:
            lines[0] = "GET /v1/ws \(random.pick(["HTTP/11", "HTTP/1.1x", "HTTPS/1.1", "http/1.1", "HTTP/1.1 "]))"
            return request("malformed-version", [400], lines)
        case 6:
            return request("host", [400], random.chance(0.5) ? header("Host", nil) : lines + ["Host: other"])
        case 7:
            return request("connection", [400], header("Connection", random.pick(["keep-alive", "close", "upgradex", ""])))
        case 8:
            return request("key-count", [400], random.chance(0.5) ? header("Sec-WebSocket-Key", nil) : lines + ["Sec-WebSocket-Key: \(key)"])
        case 9:
            let bad = random.pick([Data(random.bytes(15)).base64EncodedString(), Data(random.bytes(17)).base64EncodedString(),
                                   "not base64 at all!!!!!!!", String(key.dropLast()), key + "=", ""])
            return request("key-invalid", [400], header("Sec-WebSocket-Key", bad))
        case 10:
            let version = random.pick([nil, "8", "14", "13, 8", "0", "", "13.0"])
            var copy = header("Sec-WebSocket-Version", version)
            if random.chance(0.2) { copy = lines + ["Sec-WebSocket-Version: 13"] }
            return request("version", [426], copy)
        case 11:
            let many = Array(repeating: "h2c", count: 33).joined(separator: ", ")
            return request("list-too-long", [400], random.chance(0.5) ? header("Upgrade", many + ", websocket")
                                                                     : header("Connection", many + ", Upgrade"))
        case 12:
            lines[0] = "GET \(random.pick(["/", "/v1", "/v1/ws/", "/v2/ws", "/ws", "/v1/wss"])) HTTP/1.1"
            return request("path", [404], lines)
        case 13:
            return request("no-upgrade", [426], Array(lines.prefix(2)))
        case 14:
            return request("control-health", [200], ["GET /control/health HTTP/1.1", "Host: 127.0.0.1"])
        case 15:
            // A known control path with the wrong method is not found, and changes nothing.
            return request("control-wrong-method", [404], ["GET \(random.pick(["/control/reset", "/control/fixtures", "/control/clock/advance"])) HTTP/1.1",
                                                           "Host: 127.0.0.1"])
        case 16:
            lines[0] = random.pick(["GET http://127.0.0.1/v1/ws HTTP/1.1", "GET v1/ws HTTP/1.1", "GET * HTTP/1.1"])
            return request("target", [400], lines)
        case 17:
            lines[0] = random.pick(["GET /v1/ws", "GET  /v1/ws HTTP/1.1", "GET /v1/ws HTTP/1.1 extra", "G(T /v1/ws HTTP/1.1",
                                    " GET /v1/ws HTTP/1.1"])
            return request("request-line", [400], lines)
        case 18:
            let bad = random.pick(["No colon here", "Bad Name: x", "Bad\u{1}: x", " folded: value", "\tfolded", ": empty",
                                   "X-Value: a\u{1}b", "X-Value: caf\u{e9}"])
            return request("header-line", [400], lines + [bad])
        case 19:
            let variants: [([String], Int)] = [(["Content-Length: abc"], 400), (["Content-Length: -1"], 400),
                                               (["Content-Length: 1", "Content-Length: 2"], 400), (["Content-Length: 1048577"], 413),
                                               (["Content-Length: 99999999999999999999999"], 413),
                                               (["Transfer-Encoding: chunked"], 501), (["Transfer-Encoding: identity"], 501)]
            let (extra, status) = random.pick(variants)
            return request("framing", [status], lines + extra)
        case 20:
            return request("head-too-large", [431], lines + ["X-Big: " + String(repeating: "a", count: random.int(in: 8_200...12_000))])
        case 21:
            return request("too-many-headers", [431], lines + (0..<random.int(in: 60...80)).map { "X-H\($0): v" })
        case 22:
            // Empty lines before the request line are ignored (RFC 9112 §2.2).
            var input = request("leading-empty-lines", [101], lines)
            input.bytes = Array("\r\n\r\n".utf8) + input.bytes
            return input
        case 23:
            // Bare LF line ends: RFC 9112 §2.2 lets a server accept them.
            return request("bare-lf", [101, 400], lines, terminator: "\n")
        case 24, 25:
            var input = request("incomplete", [], lines)
            input.bytes = Array(input.bytes.prefix(random.below(input.bytes.count - 1)))
            input.expectation = .silence
            return input
        case 26:
            var junk = random.bytes(random.int(in: 1...200))
            if random.chance(0.5) { junk += Array("\r\n\r\n".utf8) }
            return WireInput(stage: .handshake, label: "handshake/junk", bytes: junk,
                             expectation: .statusOrSilence(Self.documentedStatuses))
        default:
            var input = request("mutated", [], lines)
            for _ in 0..<random.int(in: 1...3) {
                let index = random.below(input.bytes.count)
                switch random.below(3) {
                case 0: input.bytes[index] = random.byte()
                case 1: input.bytes.insert(random.byte(), at: index)
                default: input.bytes.remove(at: index)
                }
            }
            input.expectation = .statusOrSilence(Self.documentedStatuses)
            return input
        }
    }
}

private extension Array where Element == String {
    /// The request line first, the header lines in a random order.
    func shuffledTail(_ random: inout FuzzRandom) -> [String] {
        var tail = Array(dropFirst())
        for index in tail.indices.reversed() where index > 0 { tail.swapAt(index, random.below(index + 1)) }
        return [self[0]] + tail
    }
}
