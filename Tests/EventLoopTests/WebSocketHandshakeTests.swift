import EventLoop
import Foundation
import Testing

private let sampleKey = "dGhlIHNhbXBsZSBub25jZQ=="
private let sampleAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="  // RFC 6455 section 1.3

/// A valid upgrade request (RFC 6455 section 1.3), optionally with fields
/// replaced, removed (value nil) or added.
private func upgradeRequest(
    method: String = "GET",
    version: String = "HTTP/1.1",
    replacing overrides: [String: String?] = [:],
    adding extra: [(name: String, value: String)] = []
) -> HTTPRequest {
    let base: [(name: String, value: String)] = [
        ("Host", "server.example.com"),
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", sampleKey),
        ("Sec-WebSocket-Version", "13"),
    ]
    var headers: [(name: String, value: String)] = []
    for field in base {
        if let override = overrides[field.name] {
            if let value = override { headers.append((field.name, value)) }
        } else {
            headers.append(field)
        }
    }
    return HTTPRequest(method: method, target: "/v1/ws", version: version, headers: headers + extra)
}

private func rejectionStatus(_ decision: WebSocketHandshake.Decision) -> Int? {
    if case .reject(let response) = decision { return response.status }
    return nil
}

private func parsed(_ text: String) throws -> (HTTPRequest, [UInt8]) {
    var parser = HTTPRequestParser()
    guard case .request(let request, let remainder) = parser.feed(Array(text.utf8)) else {
        throw ParseFailed()
    }
    return (request, remainder)
}

private struct ParseFailed: Error {}

@Test func acceptsValidUpgradeWith101() throws {
    let decision = WebSocketHandshake.evaluate(upgradeRequest())
    guard case .accept(let response) = decision else {
        Issue.record("expected accept, got \(decision)")
        return
    }
    #expect(response.status == 101)
    #expect(response.headerValues("Upgrade") == ["websocket"])
    #expect(response.headerValues("Connection") == ["Upgrade"])
    #expect(response.headerValues("Sec-WebSocket-Accept") == [sampleAccept])
    let wire = String(decoding: response.serialized(), as: UTF8.self)
    #expect(wire.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
    #expect(wire.contains("Sec-WebSocket-Accept: \(sampleAccept)\r\n"))
    #expect(wire.hasSuffix("\r\n\r\n"))
}

@Test func acceptsMixedCaseNamesAndConnectionLists() throws {
    let text = "GET /v1/ws HTTP/1.1\r\nhOsT: h\r\nUPGRADE: WebSocket\r\nconnection: keep-alive, Upgrade\r\n"
        + "sec-websocket-key: \(sampleKey)\r\nSEC-WEBSOCKET-VERSION: 13\r\n\r\n"
    let (request, _) = try parsed(text)
    guard case .accept(let response) = WebSocketHandshake.evaluate(request) else {
        Issue.record("expected accept")
        return
    }
    #expect(response.headerValues("sec-websocket-accept") == [sampleAccept])

    let split = upgradeRequest(replacing: ["Connection": "keep-alive"], adding: [("Connection", " upgrade ")])
    if case .accept = WebSocketHandshake.evaluate(split) {} else { Issue.record("split Connection not accepted") }
    let listedUpgrade = upgradeRequest(replacing: ["Upgrade": "h2c, websocket"])
    if case .accept = WebSocketHandshake.evaluate(listedUpgrade) {} else { Issue.record("Upgrade list not accepted") }
}

@Test func plainRequestsAreNotUpgrades() throws {
    let (get, _) = try parsed("GET /control/state HTTP/1.1\r\nHost: h\r\n\r\n")
    #expect(WebSocketHandshake.evaluate(get) == .notUpgrade)
    let (post, _) = try parsed("POST /control/reset HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}")
    #expect(WebSocketHandshake.evaluate(post) == .notUpgrade)
    // Another protocol, or a token that merely contains "websocket", is not ours.
    #expect(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Upgrade": "h2c"])) == .notUpgrade)
    #expect(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Upgrade": "websocketx"])) == .notUpgrade)
    // The path is the router's business, not the handshake's.
    var other = upgradeRequest()
    other.target = "/elsewhere"
    if case .accept = WebSocketHandshake.evaluate(other) {} else { Issue.record("path must not be checked") }
}

@Test func keyProblemsAre400() {
    #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Sec-WebSocket-Key": nil]))) == 400)
    #expect(rejectionStatus(WebSocketHandshake.evaluate(
        upgradeRequest(adding: [("Sec-WebSocket-Key", "AQIDBAUGBwgJCgsMDQ4PEA==")]))) == 400)
    // 15 bytes, 17 bytes, not base64 at all, and an empty value.
    let fifteen = Data(repeating: 7, count: 15).base64EncodedString()
    let seventeen = Data(repeating: 7, count: 17).base64EncodedString()
    for bad in [fifteen, seventeen, "!!!!!!!!!!!!!!!!!!!!!!==", ""] {
        #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Sec-WebSocket-Key": bad]))) == 400,
                "key \(bad)")
    }
}

@Test func methodVersionHostAndConnectionProblemsAre400() {
    #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(method: "POST"))) == 400)
    #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(version: "HTTP/1.0"))) == 400)
    #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Host": nil]))) == 400)
    #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Connection": nil]))) == 400)
    #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Connection": "keep-alive"]))) == 400)
    #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Connection": "upgraded"]))) == 400)
}

@Test func unsupportedVersionIs426WithSupportedVersion() {
    for version: String? in ["12", nil, "13, 8", "013"] {
        let decision = WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Sec-WebSocket-Version": version]))
        guard case .reject(let response) = decision else {
            Issue.record("expected reject for \(String(describing: version))")
            continue
        }
        #expect(response.status == 426)
        #expect(response.headerValues("Sec-WebSocket-Version") == ["13"])
        #expect(response.headerValues("Connection") == ["close"])
        #expect(String(decoding: response.serialized(), as: UTF8.self).hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"))
    }
}

@Test func rejectionsCloseTheConnection() {
    guard case .reject(let response) = WebSocketHandshake.evaluate(upgradeRequest(method: "PUT")) else {
        Issue.record("expected reject")
        return
    }
    #expect(response.headerValues("Connection") == ["close"])
    #expect(!response.body.isEmpty)
}

@Test func hugeCommaListsAreRejectedFast() {
    let commas = String(repeating: ",", count: 5000)
    let stopwatch = Stopwatch()
    #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Connection": commas + "upgrade"]))) == 400)
    #expect(rejectionStatus(WebSocketHandshake.evaluate(upgradeRequest(replacing: ["Upgrade": commas + "websocket"]))) == 400)
    #expect(stopwatch.elapsedSeconds < 5)

    // The element limit counts across fields and is configurable.
    let limits = HTTPLimits(maxListElements: 3)
    let atLimit = upgradeRequest(replacing: ["Connection": "a, b"], adding: [("Connection", "upgrade")])
    if case .accept = WebSocketHandshake.evaluate(atLimit, limits: limits) {} else { Issue.record("3 elements must pass") }
    let overLimit = upgradeRequest(replacing: ["Connection": "a, b"], adding: [("Connection", "c, upgrade")])
    #expect(rejectionStatus(WebSocketHandshake.evaluate(overLimit, limits: limits)) == 400)
}

@Test func parserAndHandshakeTogetherKeepTheFirstFrame() throws {
    let head = "GET /v1/ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: \(sampleKey)\r\nSec-WebSocket-Version: 13\r\n\r\n"
    let frame: [UInt8] = [0x81, 0x80, 1, 2, 3, 4]
    var parser = HTTPRequestParser()
    guard case .request(let request, let remainder) = parser.feed(Array(head.utf8) + frame) else {
        Issue.record("expected a request")
        return
    }
    #expect(remainder == frame)
    guard case .accept(let response) = WebSocketHandshake.evaluate(request) else {
        Issue.record("expected accept")
        return
    }
    #expect(response.headerValues("Sec-WebSocket-Accept") == [sampleAccept])
}
