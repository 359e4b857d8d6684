import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

/// Rows 1-9 of the robustness checklist: the HTTP upgrade (RFC 6455 section 4). Each
/// bad request goes over a real socket while a bystander stays connected.
extension Robustness {
    @Suite struct HTTPUpgrade {
        /// Sends `request`, expects `status`, and checks that nothing was upgraded.
        private func expectRejected(_ f: ServerFixture, _ request: String, status: Int, mentioning hint: String,
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
            let sessions = f.server.sessionCount
            let reply = try f.rawHTTP(request)
            #expect(reply.status == status, "\(request.prefix(60))", sourceLocation: sourceLocation)
            #expect(reply.text.contains(hint), "\(reply.text)", sourceLocation: sourceLocation)
            #expect(reply.headerValues("Sec-WebSocket-Accept").isEmpty, sourceLocation: sourceLocation)
            #expect(reply.headerValues("Content-Length") == ["\(reply.body.count)"], sourceLocation: sourceLocation)
            f.settle(sourceLocation: sourceLocation)
            #expect(f.server.sessionCount == sessions, sourceLocation: sourceLocation)
        }

        @Test func row1_badKeysMethodsAndVersionsGet400WithoutUpgrade() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let base = "Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            let cases: [(String, String)] = [
                ("GET /v1/ws HTTP/1.1\r\n" + base + "\r\n", "exactly one Sec-WebSocket-Key"),
                ("GET /v1/ws HTTP/1.1\r\n" + base + key + key + "\r\n", "exactly one Sec-WebSocket-Key"),
                ("GET /v1/ws HTTP/1.1\r\n" + base + "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAA\r\n\r\n", "16 bytes"),
                ("GET /v1/ws HTTP/1.1\r\n" + base + "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n", "16 bytes"),
                ("GET /v1/ws HTTP/1.1\r\n" + base + "Sec-WebSocket-Key: not-a-key\r\n\r\n", "16 bytes"),
                ("GET /v1/ws HTTP/1.1\r\n" + base + "Sec-WebSocket-Key: \r\n\r\n", "16 bytes"),
                (handshakeRequest(method: "POST"), "must use GET"),
                (handshakeRequest(method: "PUT"), "must use GET"),
                (handshakeRequest(version: "HTTP/1.0"), "requires HTTP/1.1"),
                ("GET /v1/ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + key
                    + "Sec-WebSocket-Version: 13\r\n\r\n", "exactly one Host"),
                ("GET /v1/ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: keep-alive\r\n" + key
                    + "Sec-WebSocket-Version: 13\r\n\r\n", "Connection must include upgrade"),
            ]
            for (request, hint) in cases {
                try expectRejected(f, request, status: 400, mentioning: hint)
            }
            reportFigure(1, "\(cases.count) malformed handshakes, each 400, 0 upgrades")
            bystander.expectUnaffected()
            #expect(f.server.openConnectionCount == 1)  // the bystander's and nothing else
            #expect(f.shutdown() == 0)
        }

        @Test func row2_otherWebSocketVersionsGet426NamingVersion13() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            for version in ["8", "12", "14", "130", "", "13, 8", "thirteen"] {
                let reply = try f.rawHTTP(handshakeRequest(wsVersion: version))
                #expect(reply.status == 426, "version '\(version)'")
                #expect(reply.headerValues("Sec-WebSocket-Version") == ["13"], "version '\(version)'")
                #expect(reply.headerValues("Sec-WebSocket-Accept").isEmpty)
            }
            // Missing altogether, and given twice.
            let noVersion = "GET /v1/ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            #expect(try f.rawHTTP(noVersion).headerValues("Sec-WebSocket-Version") == ["13"])
            let twice = try f.rawHTTP(handshakeRequest(extraHeaders: "Sec-WebSocket-Version: 13\r\n"))
            #expect(twice.status == 426)
            f.settle()
            #expect(f.server.sessionCount == 1)
            reportFigure(2, "9 version values (8, 12, 14, 130, empty, \"13, 8\", text, missing, twice): each 426 with "
                         + "Sec-WebSocket-Version: 13, 0 upgrades")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row3_mixedCaseHeadersAndConnectionListsAreAccepted() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let variants = [
                "GET /v1/ws HTTP/1.1\r\nhOsT: 127.0.0.1\r\nuPgRaDe: WebSocket\r\ncOnNeCtIoN: keep-alive, Upgrade\r\n"
                    + "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nSEC-WEBSOCKET-VERSION: 13\r\n\r\n",
                "GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: WEBSOCKET\r\nConnection: keep-alive\r\n"
                    + "Connection: UPGRADE\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\nX-Unknown: ignored\r\n\r\n",
                "GET /v1/ws?client=sdk&v=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: h2c, websocket\r\n"
                    + "Connection: Upgrade , keep-alive\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version:13\r\n\r\n",
            ]
            for (index, request) in variants.enumerated() {
                let raw = try f.rawConnect()
                let uid = ["bob", "carol", "dave"][index]
                raw.write(Array(request.utf8) + ClientFrame.text(loginText(uid: uid, device: "mixed")))
                #expect(f.loop.run(timeout: 5) { !raw.messages.isEmpty })
                let head = try #require(HTTPReply(raw.received))
                #expect(head.status == 101)
                #expect(head.headerValues("Sec-WebSocket-Accept") == ["s3pPLMBiTxaQ9kYGzzhZRbK+xOo="])
                #expect(raw.messages.first?.resultUser?.uid == uid)
                f.settle()
                #expect(bystander.events(about: uid) == ["user.online"])
                raw.connection.close()
                f.settle()
                #expect(bystander.events(about: uid) == ["user.online", "user.offline"])
            }
            reportFigure(3, "\(variants.count) spellings accepted, each logged in and announced once")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row4_oversizedHeadsGet431AsSoonAsTheLimitIsCrossed() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            // No blank line ever comes: the answer must not wait for the end of the head.
            let longLine = "GET /v1/ws HTTP/1.1\r\nHost: a\r\nX-Padding: " + String(repeating: "a", count: 8_200)
            let raw = try f.rawConnect()
            raw.write(Array(longLine.utf8))
            #expect(f.loop.run(timeout: 5) { raw.isClosed })
            let bytesReply = try #require(HTTPReply(raw.received))
            #expect(bytesReply.status == 431)
            #expect(bytesReply.text.contains("8192 bytes"))

            let manyHeaders = "GET /v1/ws HTTP/1.1\r\n" + (1...65).map { "X-H\($0): v\r\n" }.joined()
            let raw2 = try f.rawConnect()
            raw2.write(Array(manyHeaders.utf8))
            #expect(f.loop.run(timeout: 5) { raw2.isClosed })
            let countReply = try #require(HTTPReply(raw2.received))
            #expect(countReply.status == 431)
            #expect(countReply.text.contains("64 header fields"))
            // Exactly at the limits is fine: 64 fields, and a head of 8,192 bytes.
            let sixtyFour = handshakeRequest(path: "/x", extraHeaders: (1...59).map { "X-H\($0): v\r\n" }.joined())
            #expect(try f.rawHTTP(sixtyFour).status == 404)
            let fill = 8_192 - handshakeRequest(path: "/x", extraHeaders: "X-Pad: \r\n").utf8.count
            let atLimit = handshakeRequest(path: "/x", extraHeaders: "X-Pad: " + String(repeating: "p", count: fill) + "\r\n")
            #expect(atLimit.utf8.count == 8_192)
            #expect(try f.rawHTTP(atLimit).status == 404)
            let overLimit = handshakeRequest(path: "/x", extraHeaders: "X-Pad: " + String(repeating: "p", count: fill + 1) + "\r\n")
            #expect(try f.rawHTTP(overLimit).status == 431)
            reportFigure(4, "431 for a head of 8,193+ bytes and for 65 fields, answered without waiting for the blank line; 8,192 bytes and 64 fields pass")
            f.settle()
            bystander.expectUnaffected()
            #expect(f.server.openConnectionCount == 1)
            #expect(f.shutdown() == 0)
        }

        @Test func row5_slowlorisSocketsAreClosedAtTheHandshakeDeadline() throws {
            let f = try ServerFixture()
            let port = f.server.address.port
            let bystander = try Bystander(f)
            let baselineSockets = ProcessProbe.socketDescriptors(port: port)
            let baselineFDs = ProcessProbe.openDescriptors
            let t0 = f.now
            let count = 300
            var slow: [RawConnection] = []
            for _ in 0..<count { slow.append(try f.rawConnect()) }
            f.settle()
            let request = Array(handshakeRequest().utf8)
            // One byte per socket every 2 s: 4 bytes each at 0, 2, 4, 6 and 8 s.
            for step in 0..<5 {
                for raw in slow { raw.write([request[step]]) }
                f.settle()
                if step < 4 { f.advance(seconds: 2) }
            }
            #expect(f.now == t0.advanced(by: 8_000))
            let during = ProcessProbe.socketDescriptors(port: port)
            #expect(during == baselineSockets + 2 * count)
            #expect(f.server.openConnectionCount == 1 + count)
            f.advance(to: t0.advanced(by: 9_999))
            #expect(slow.allSatisfy { !$0.isClosed })
            f.advance(milliseconds: 1)
            #expect(slow.allSatisfy { $0.isClosed && $0.received.isEmpty })
            #expect(f.server.openConnectionCount == 1)
            let after = ProcessProbe.socketDescriptors(port: port)
            #expect(after == baselineSockets)
            reportFigure(5, "\(count) slowloris sockets closed at t = 10.000 s (none at 9.999 s); sockets on the port: "
                         + "\(baselineSockets) before, \(during) during, \(after) after; process fds \(baselineFDs) before, "
                         + "\(ProcessProbe.openDescriptors) after")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row6_handshakeAndFirstFramesInOneSegmentAreAllProcessed() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let raw = try f.rawConnect()
            let segment = Array(handshakeRequest().utf8) + ClientFrame.text(loginText(uid: "bob", device: "one-shot"))
                + ClientFrame.text(requestText(2, "ping"))
            raw.write(segment)
            #expect(f.loop.run(timeout: 5) { raw.messages.count >= 2 })
            #expect(HTTPReply(raw.received)?.status == 101)
            #expect(raw.messages.first?.resultUser?.uid == "bob")
            #expect(raw.messages.last?.resultObject?["pong"] == true)
            f.settle()
            #expect(bystander.events(about: "bob") == ["user.online"])
            raw.connection.reset()
            f.settle()
            #expect(bystander.events(about: "bob") == ["user.online", "user.offline"])
            reportFigure(6, "handshake + 2 frames in one \(segment.count)-byte write: 101, login reply, pong")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        /// Everything the server sends back for `input`, on a fresh server, delivered
        /// whole or one byte per write; the connection's end is waited for.
        private static func exchange(_ input: [UInt8], byteByByte: Bool) throws -> (reply: [UInt8], trace: [UInt8]) {
            let f = try ServerFixture()
            let raw = try f.rawConnect()
            if byteByByte { f.writeByteByByte(raw, input) } else { raw.write(input) }
            f.settle()
            if !raw.isClosed {
                raw.connection.close()
                f.settle()
            }
            let trace = TraceLog.jsonLines(f.server.trace.entries)
            #expect(f.shutdown() == 0)
            return (raw.received, trace)
        }

        @Test func row7_inputsDeliveredOneByteAtATimeGiveTheSameResult() throws {
            let session = Array(handshakeRequest().utf8) + ClientFrame.text(loginText(uid: "bob", device: "slow"))
                + ClientFrame.make(opcode: 1, payload: Array(#"{"id":2,"#.utf8), fin: false)
                + ClientFrame.make(opcode: 0, payload: Array(#""op":"ping"}"#.utf8))
                + ClientFrame.make(opcode: 9, payload: Array("hi".utf8))
                + ClientFrame.text(requestText(3, "users.get", #""uid":"carol""#)) + ClientFrame.close(1000)
            let inputs: [(String, [UInt8])] = [
                ("a session", session),
                ("a bad key", Array(handshakeRequest(key: "short").utf8)),
                ("version 8", Array(handshakeRequest(wsVersion: "8").utf8)),
                ("an unknown path", Array(handshakeRequest(path: "/nope").utf8)),
                ("a control request", Array("GET /control/health HTTP/1.1\r\nHost: a\r\n\r\n".utf8)),
                ("a control POST", Array("POST /control/faults HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\n{\"fault\":".utf8)),
                ("a head over the limit", Array(("GET / HTTP/1.1\r\nX: " + String(repeating: "x", count: 8_300)).utf8)),
                ("an unmasked frame", Array(handshakeRequest().utf8) + ClientFrame.make(opcode: 1, payload: [0x7B], masked: false)),
            ]
            var totalBytes = 0
            for (name, input) in inputs {
                let whole = try Self.exchange(input, byteByByte: false)
                let split = try Self.exchange(input, byteByByte: true)
                #expect(!whole.reply.isEmpty, "\(name)")
                #expect(whole.reply == split.reply, "\(name): the replies differ")
                #expect(whole.trace == split.trace, "\(name): the traces differ")
                totalBytes += input.count
            }
            reportFigure(7, "\(inputs.count) inputs (\(totalBytes) bytes) replayed one byte per write: replies and traces byte-identical")
        }

        @Test func row8_pathologicalHeaderValuesAreRejectedInLinearTime() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let commas = String(repeating: ",", count: 8_000)
            let overSocket: [(String, Int, String)] = [
                (handshakeRequest(extraHeaders: "Connection: " + commas + "\r\n"), 400, "too many elements in Connection"),
                ("GET /v1/ws HTTP/1.1\r\nHost: a\r\nUpgrade: " + commas + "websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                 400, "too many elements in Upgrade"),
                (handshakeRequest(extraHeaders: "X-Name: Zoë Ünïcode ☃\r\n"), 400, "non-ASCII"),
                (handshakeRequest(extraHeaders: "X-Ctl: a\u{01}b\r\n"), 400, "control or non-ASCII"),
                (handshakeRequest(extraHeaders: "Ünï: value\r\n"), 400, "invalid header field name"),
                ("GET /v1/ws/é HTTP/1.1\r\nHost: a\r\n\r\n", 400, "absolute path"),
                (handshakeRequest(extraHeaders: " folded\r\n"), 400, "line folding"),
            ]
            for (request, status, hint) in overSocket {
                try expectRejected(f, request, status: status, mentioning: hint)
            }
            // CPU time per byte, parsing and evaluating in-process, fed one byte at a time
            // (the worst case for a parser that rescans): a quadratic parser would take
            // 8x longer per byte at the larger size.
            func nanosecondsPerByte(commas count: Int) -> Double {
                let bytes = Array(handshakeRequest(extraHeaders: "Connection: " + String(repeating: ",", count: count)
                                                   + "\r\nX-Ü: Ü\r\n").utf8)
                let rounds = 20
                let seconds = ProcessProbe.threadCPUSeconds {
                    for _ in 0..<rounds {
                        var parser = HTTPRequestParser()
                        for byte in bytes {
                            if case .needMore = parser.feed([byte]) { continue }
                            break
                        }
                    }
                }
                return seconds * 1e9 / Double(rounds * bytes.count)
            }
            _ = nanosecondsPerByte(commas: 100)  // warm up
            // The best of seven runs each, the sizes taking turns so that both meet the same
            // load: load only makes a run slower, so the ratio of the minimums is the parser's.
            var small = Double.infinity, large = Double.infinity
            for _ in 0..<7 {
                small = min(small, nanosecondsPerByte(commas: 1_000))
                large = min(large, nanosecondsPerByte(commas: 7_900))
            }
            #expect(large < small * 4, "per-byte cost grew from \(small) ns to \(large) ns")
            let longList = commas + "upgrade"
            let listSeconds = ProcessProbe.seconds {
                for _ in 0..<1_000 {
                    let request = HTTPRequest(method: "GET", target: "/", headers: [
                        ("Host", "a"), ("Upgrade", "websocket"), ("Connection", longList)])
                    guard case .reject = WebSocketHandshake.evaluate(request) else {
                        Issue.record("an 8,000-element Connection list was not rejected")
                        return
                    }
                }
            }
            reportFigure(8, String(format: "%d bad values rejected over the socket; parser fed byte by byte: %.0f ns/byte "
                                   + "at 1k commas, %.0f ns/byte at 7.9k commas; 8k-comma Connection list judged in %.1f µs",
                                   overSocket.count, small, large, listSeconds * 1e6 / 1_000))
            f.settle()
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row9_unknownPathsAndPlainRequestsGetAClearHTTPError() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let cases: [(String, Int, String)] = [
                (handshakeRequest(path: "/v2/socket"), 404, "/v1/ws"),
                ("GET / HTTP/1.1\r\nHost: a\r\n\r\n", 404, "unknown path"),
                ("GET /v1/ws HTTP/1.1\r\nHost: a\r\n\r\n", 426, "only speaks WebSocket"),
                ("POST /v1/ws HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}", 426, "only speaks WebSocket"),
                ("GET /control/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404, "unknown control route"),
                ("HELLO\r\n\r\n", 400, "malformed request line"),
                ("GET http://a/v1/ws HTTP/1.1\r\nHost: a\r\n\r\n", 400, "absolute path"),
                ("GET /v1/ws HTTP/2.0\r\nHost: a\r\n\r\n", 505, "HTTP/1.1"),
                ("GET /v1/ws HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501, "Transfer-Encoding"),
                ("POST /control/faults HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n", 413, "body larger"),
                ("POST /control/faults HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "conflicting"),
            ]
            for (request, status, hint) in cases {
                try expectRejected(f, request, status: status, mentioning: hint)
            }
            reportFigure(9, "\(cases.count) non-upgrade or unknown requests answered 400/404/413/426/501/505 with a message")
            bystander.expectUnaffected()
            #expect(f.server.openConnectionCount == 1)
            #expect(f.shutdown() == 0)
        }
    }
}
