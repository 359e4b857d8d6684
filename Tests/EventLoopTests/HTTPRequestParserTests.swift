import EventLoop
import Testing

/// Feeds `text` in one piece to a fresh parser.
private func parseWhole(_ text: String, limits: HTTPLimits = HTTPLimits()) -> HTTPRequestParser.Result {
    var parser = HTTPRequestParser(limits: limits)
    return parser.feed(Array(text.utf8))
}

/// Feeds `bytes` one at a time; every result but the last must be `.needMore`.
private func parseBytewise(_ bytes: [UInt8], limits: HTTPLimits = HTTPLimits()) -> HTTPRequestParser.Result {
    var parser = HTTPRequestParser(limits: limits)
    for (index, byte) in bytes.enumerated() {
        let result = parser.feed([byte])
        if result != .needMore || index == bytes.count - 1 { return result }
    }
    return .needMore
}

/// The status of a failure result, or nil for any other result.
private func failureStatus(_ result: HTTPRequestParser.Result) -> Int? {
    if case .failure(let response) = result { return response.status }
    return nil
}

private func requestOf(_ result: HTTPRequestParser.Result) -> (HTTPRequest, [UInt8])? {
    if case .request(let request, let remainder) = result { return (request, remainder) }
    return nil
}

@Test func parsesSimpleGetWithOrderedHeaders() throws {
    let result = parseWhole("GET /v1/ws?user=al%20ice&x HTTP/1.1\r\nHost: example\r\nX-Two:  a b \t\r\nx-two: c\r\n\r\n")
    let (request, remainder) = try #require(requestOf(result))
    #expect(request.method == "GET")
    #expect(request.target == "/v1/ws?user=al%20ice&x")
    #expect(request.version == "HTTP/1.1")
    #expect(request.headers.map(\.name) == ["Host", "X-Two", "x-two"])
    #expect(request.headerValues("x-TWO") == ["a b", "c"])
    #expect(request.headerValues("missing") == [])
    #expect(request.path == "/v1/ws")
    #expect(request.query == ["user": "al ice", "x": ""])
    #expect(request.body.isEmpty)
    #expect(remainder.isEmpty)
}

@Test func acceptsBareLineFeedsAndLeadingEmptyLine() throws {
    let (request, _) = try #require(requestOf(parseWhole("\r\nPOST /control/x HTTP/1.0\nContent-Length: 2\n\nhi")))
    #expect(request.method == "POST")
    #expect(request.version == "HTTP/1.0")
    #expect(request.body == Array("hi".utf8))
}

@Test func returnsBytesAfterTheHeadAsRemainder() throws {
    var bytes = Array("GET /v1/ws HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
    let frame: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
    bytes += frame
    var parser = HTTPRequestParser()
    let (request, remainder) = try #require(requestOf(parser.feed(bytes)))
    #expect(request.path == "/v1/ws")
    #expect(remainder == frame)
}

@Test func bodySplitAcrossFeeds() throws {
    var parser = HTTPRequestParser()
    #expect(parser.feed(Array("POST /control/state HTTP/1.1\r\nContent-Length: 10\r\n\r\n{\"a\"".utf8)) == .needMore)
    #expect(parser.feed(Array(":".utf8)) == .needMore)
    let result = parser.feed(Array(" 12}GET /".utf8))
    let (request, remainder) = try #require(requestOf(result))
    #expect(String(decoding: request.body, as: UTF8.self) == "{\"a\": 12}G")
    #expect(remainder == Array("ET /".utf8))
}

@Test func rawBufferFeedMatchesArrayFeed() throws {
    let bytes = Array("PUT /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcdef".utf8)
    var parser = HTTPRequestParser()
    let result = bytes.withUnsafeBytes { parser.feed($0) }
    let (request, remainder) = try #require(requestOf(result))
    #expect(request.body == Array("abc".utf8))
    #expect(remainder == Array("def".utf8))
    #expect(result == parseWhole("PUT /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcdef"))
}

@Test func byteAtATimeEqualsWholeFeed() throws {
    var text = "POST /control/bulk?id=7 HTTP/1.1\r\nHost: localhost\r\n"
    for index in 0..<40 {
        text += "X-Filler-\(index): " + String(repeating: "v", count: 120) + "\r\n"
    }
    let body = String(repeating: "0123456789", count: 270)
    text += "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    let bytes = Array(text.utf8)
    #expect(bytes.count >= 8000)
    let whole: HTTPRequestParser.Result = {
        var parser = HTTPRequestParser()
        return parser.feed(bytes)
    }()
    let (request, remainder) = try #require(requestOf(whole))
    #expect(request.headers.count == 42)
    #expect(request.body == Array(body.utf8))
    #expect(remainder.isEmpty)

    let bytewise = parseBytewise(bytes)
    #expect(bytewise == whole)
    let (sameRequest, _) = try #require(requestOf(bytewise))
    #expect(sameRequest.headerValues("x-filler-39").first?.utf8.count == 120)
}

@Test func byteAtATimeFeedingIsLinear() throws {
    // A quadratic parser (rescanning the buffer on every feed) needs on the
    // order of 10^11 steps here; a linear one finishes in well under a second.
    let size = 400_000
    let limits = HTTPLimits(maxHeadBytes: 1 << 20)
    var parser = HTTPRequestParser(limits: limits)
    let stopwatch = Stopwatch()
    for byte in Array("GET / HTTP/1.1\r\nX-Big: ".utf8) { #expect(parser.feed([byte]) == .needMore) }
    let filler: [UInt8] = [UInt8(ascii: "a")]
    for _ in 0..<size {
        if parser.feed(filler) != .needMore { Issue.record("finished early"); return }
    }
    let (request, _) = try #require(requestOf(parser.feed(Array("\r\n\r\n".utf8))))
    #expect(request.headerValues("x-big").first?.utf8.count == size)
    #expect(stopwatch.elapsedSeconds < 20)
}

@Test func headLargerThanLimitIs431BeforeHeadEnds() {
    let limits = HTTPLimits(maxHeadBytes: 100)
    var parser = HTTPRequestParser(limits: limits)
    let start = Array("GET / HTTP/1.1\r\nX: ".utf8)
    #expect(parser.feed(start) == .needMore)
    // Fill up to exactly the limit without ending the head: still waiting.
    #expect(parser.feed([UInt8](repeating: UInt8(ascii: "a"), count: 100 - start.count)) == .needMore)
    // One more byte crosses the limit: rejected at once.
    let result = parser.feed([UInt8(ascii: "a")])
    #expect(failureStatus(result) == 431)
    if case .failure(let response) = result {
        #expect(response.headerValues("Connection") == ["close"])
        #expect(response.serialized().starts(with: Array("HTTP/1.1 431 Request Header Fields Too Large\r\n".utf8)))
    }
}

@Test func headOfExactlyTheLimitIsAccepted() {
    let prefix = "GET / HTTP/1.1\r\nX: "
    let limit = 8192
    let padding = String(repeating: "p", count: limit - prefix.utf8.count - 4)
    let exact = prefix + padding + "\r\n\r\n"
    #expect(exact.utf8.count == limit)
    #expect(requestOf(parseWhole(exact)) != nil)
    let over = prefix + padding + "p\r\n\r\n"
    #expect(failureStatus(parseWhole(over)) == 431)
    #expect(failureStatus(parseWhole(prefix + String(repeating: "z", count: 100_000))) == 431)
}

@Test func tooManyHeadersIs431BeforeHeadEnds() {
    var text = "GET / HTTP/1.1\r\n"
    for index in 0..<64 { text += "H\(index): v\r\n" }
    var parser = HTTPRequestParser()
    #expect(parser.feed(Array(text.utf8)) == .needMore)
    #expect(failureStatus(parser.feed(Array("H64: v\r\n".utf8))) == 431)
    #expect(requestOf(parseWhole(text + "\r\n")) != nil)
}

@Test func oversizedBodyIs413() {
    #expect(failureStatus(parseWhole("POST / HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n")) == 413)
    #expect(failureStatus(parseWhole("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n")) == 413)
    var parser = HTTPRequestParser()
    #expect(parser.feed(Array("POST / HTTP/1.1\r\nContent-Length: 1048576\r\n\r\n".utf8)) == .needMore)
}

@Test func transferEncodingIs501() {
    #expect(failureStatus(parseWhole("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")) == 501)
    #expect(failureStatus(parseWhole("POST / HTTP/1.1\r\nContent-Length: 1\r\ntransfer-encoding: identity\r\n\r\nx")) == 501)
}

@Test func contentLengthRules() throws {
    #expect(failureStatus(parseWhole("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd")) == 400)
    #expect(failureStatus(parseWhole("POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc")) == 400)
    #expect(failureStatus(parseWhole("POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\nabc")) == 400)
    #expect(failureStatus(parseWhole("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n")) == 400)
    let (request, _) = try #require(requestOf(parseWhole("POST / HTTP/1.1\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\nabc")))
    #expect(request.body == Array("abc".utf8))
}

@Test func obsoleteLineFoldingIs400() {
    #expect(failureStatus(parseWhole("GET / HTTP/1.1\r\nX-A: one\r\n two\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET / HTTP/1.1\r\nX-A: one\r\n\ttwo\r\n\r\n")) == 400)
}

@Test func nonASCIIOrControlBytesInValueAre400() {
    var bytes = Array("GET / HTTP/1.1\r\nX-Name: caf".utf8)
    bytes += [0xC3, 0xA9]
    bytes += Array("\r\n\r\n".utf8)
    var parser = HTTPRequestParser()
    #expect(failureStatus(parser.feed(bytes)) == 400)
    #expect(failureStatus(parseWhole("GET / HTTP/1.1\r\nX-Name: a\u{01}b\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET / HTTP/1.1\r\nX-Name: a\rb\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET / HTTP/1.1\r\nX-Name: a\u{7F}\r\n\r\n")) == 400)
    #expect(requestOf(parseWhole("GET / HTTP/1.1\r\nX-Name: a\tb\r\n\r\n")) != nil)
}

@Test func malformedHeaderNamesAre400() {
    #expect(failureStatus(parseWhole("GET / HTTP/1.1\r\nHost : h\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET / HTTP/1.1\r\n: h\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET / HTTP/1.1\r\nNoColon\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET / HTTP/1.1\r\nBad(Name): v\r\n\r\n")) == 400)
}

@Test func requestLineRules() {
    #expect(failureStatus(parseWhole("GET / HTTP/2.0\r\n\r\n")) == 505)
    #expect(failureStatus(parseWhole("GET / HTTP/0.9\r\n\r\n")) == 505)
    #expect(failureStatus(parseWhole("GET / HTTP/1.1x\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET / http/1.1\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET http://h/ HTTP/1.1\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET  / HTTP/1.1\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET / HTTP/1.1 \r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("G(T / HTTP/1.1\r\n\r\n")) == 400)
    #expect(failureStatus(parseWhole("GET /a\u{01}b HTTP/1.1\r\n\r\n")) == 400)
    // The failure is reported as soon as the request line ends.
    var parser = HTTPRequestParser()
    #expect(failureStatus(parser.feed(Array("GET / HTTP/3.0\r\n".utf8))) == 505)
}

@Test func feedingAfterCompletionFails() {
    var parser = HTTPRequestParser()
    #expect(requestOf(parser.feed(Array("GET / HTTP/1.1\r\n\r\n".utf8))) != nil)
    #expect(failureStatus(parser.feed(Array("GET / HTTP/1.1\r\n\r\n".utf8))) != nil)
}

@Test func responseSerialization() {
    let response = HTTPResponse(status: 200, headers: [("X-A", "1"), ("Content-Length", "999")], body: Array("ok".utf8))
    #expect(String(decoding: response.serialized(), as: UTF8.self)
        == "HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 2\r\n\r\nok")
    let json = HTTPResponse.json(status: 404, body: "{}")
    #expect(String(decoding: json.serialized(), as: UTF8.self)
        == "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    let text = HTTPResponse.text(status: 413, "big")
    #expect(text.headerValues("content-type") == ["text/plain; charset=utf-8"])
    #expect(String(decoding: text.serialized(), as: UTF8.self).hasPrefix("HTTP/1.1 413 Content Too Large\r\n"))
    let empty = HTTPResponse(status: 204)
    #expect(String(decoding: empty.serialized(), as: UTF8.self) == "HTTP/1.1 204 No Content\r\n\r\n")
}

@Test func failureResponsesCloseTheConnectionAndExplain() throws {
    let result = parseWhole("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n")
    guard case .failure(let response) = result else {
        Issue.record("expected a failure, got \(result)")
        return
    }
    #expect(response.status == 400)
    #expect(response.headerValues("Connection") == ["close"])
    #expect(!response.body.isEmpty)
    let wire = String(decoding: response.serialized(), as: UTF8.self)
    #expect(wire.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
    #expect(wire.contains("Content-Length: \(response.body.count)\r\n"))
}
