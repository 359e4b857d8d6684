import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

/// Rows 20-24 of the robustness checklist: application messages (protocol v1) that are
/// malformed, out of order, unauthorised or out of range, and a client that stops
/// reading, each while a bystander stays connected.
extension Robustness {
    @Suite struct Messages {
        @Test func row20_malformedRequestsGetAnErrorReplyAndTheConnectionStaysOpen() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let client = try f.loggedIn("bob", device: "b")
            let nested = { (depth: Int) in
                #"{"id":90,"op":"ping","x":"# + String(repeating: "[", count: depth - 1)
                    + String(repeating: "]", count: depth - 1) + "}"
            }
            // (frame, expected error code, expected reply id)
            let cases: [(String, String, RequestID?)] = [
                ("not json", "ERR_BAD_REQUEST", nil),
                ("", "ERR_BAD_REQUEST", nil),
                (#"{"id":1,"op":"ping""#, "ERR_BAD_REQUEST", nil),
                (#"{"id":1,"op":"ping"} trailing"#, "ERR_BAD_REQUEST", nil),
                ("[1,2,3]", "ERR_BAD_REQUEST", nil),
                (#""ping""#, "ERR_BAD_REQUEST", nil),
                ("42", "ERR_BAD_REQUEST", nil),
                ("null", "ERR_BAD_REQUEST", nil),
                ("true", "ERR_BAD_REQUEST", nil),
                (nested(33), "ERR_BAD_REQUEST", nil),
                (String(repeating: "[", count: 60_000), "ERR_BAD_REQUEST", nil),
                (String(repeating: #"{"a":"#, count: 10_000), "ERR_BAD_REQUEST", nil),
                (#"{"op":"ping"}"#, "ERR_BAD_REQUEST", nil),
                (#"{"id":null,"op":"ping"}"#, "ERR_BAD_REQUEST", nil),
                (#"{"id":1.5,"op":"ping"}"#, "ERR_BAD_REQUEST", nil),
                (#"{"id":true,"op":"ping"}"#, "ERR_BAD_REQUEST", nil),
                (#"{"id":{"n":1},"op":"ping"}"#, "ERR_BAD_REQUEST", nil),
                (#"{"id":2,"op":"teleport"}"#, "ERR_UNKNOWN_OP", .integer(2)),
                (#"{"id":"s3","op":"PING"}"#, "ERR_UNKNOWN_OP", .string("s3")),
                (#"{"id":4}"#, "ERR_INVALID_FIELD", .integer(4)),
                (#"{"id":5,"op":7}"#, "ERR_INVALID_FIELD", .integer(5)),
                (#"{"id":6,"op":"users.get","uid":6}"#, "ERR_INVALID_FIELD", .integer(6)),
                (#"{"id":7,"op":"users.get"}"#, "ERR_INVALID_FIELD", .integer(7)),
                (#"{"id":8,"op":"users.list","status":"away"}"#, "ERR_INVALID_FIELD", .integer(8)),
                (#"{"id":9,"op":"users.list","cursor":9}"#, "ERR_INVALID_FIELD", .integer(9)),
                (#"{"id":10,"op":"login","uid":"bob","platform":"toaster"}"#, "ERR_INVALID_FIELD", .integer(10)),
                (#"{"id":11,"op":"login","uid":"bob","presence":{"mode":"psychic"}}"#, "ERR_INVALID_FIELD", .integer(11)),
                (#"{"id":12,"op":"login","uid":"bob","reconnect":"yes"}"#, "ERR_INVALID_FIELD", .integer(12)),
                (#"{"id":13,"op":"users.get","uid":"\ud800"}"#, "ERR_BAD_REQUEST", nil),
            ]
            for (frame, code, id) in cases {
                let before = client.messages.count
                client.send(text: frame)
                f.settle()
                let replies = client.messages.dropFirst(before)
                #expect(replies.count == 1, "\(frame.prefix(50)): \(replies.count) replies")
                #expect(replies.first?.errorCode == code, "\(frame.prefix(50)): \(String(describing: replies.first))")
                if case .error(let replyID, _)? = replies.first {
                    #expect(replyID == id, "\(frame.prefix(50))")
                }
                #expect(!client.isClosed, "\(frame.prefix(50)) closed the connection")
            }
            // At the depth limit (32 levels) the request is served.
            client.send(text: nested(32))
            f.settle()
            #expect(client.messages.last?.requestID == .integer(90))
            #expect(client.messages.last?.resultObject?["pong"] == true)
            // A binary frame is refused in the same way.
            client.socket.connection.write(ClientFrame.make(opcode: 2, payload: [1, 2, 3]))
            f.settle()
            #expect(client.messages.last?.errorCode == "ERR_BAD_REQUEST")
            client.send(text: requestText(999, "ping"))
            f.settle()
            #expect(client.messages.last?.requestID == .integer(999))
            #expect(client.messages.last?.resultObject?["pong"] == true)
            #expect(!client.isClosed)
            #expect(bystander.events(about: "bob") == ["user.online"])
            reportFigure(20, "\(cases.count + 1) malformed frames, one error reply each, connection kept; 32 levels of nesting served, 33 refused")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row21_requestsBeforeLoginAndASecondLoginAreRefusedWithoutClosing() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let client = try f.connect()
            for (op, fields) in [("ping", [:]), ("logout", [:]), ("users.get", ["uid": "carol"]),
                                 ("users.list", ["limit": 5])] as [(String, [String: JSONValue])] {
                let id = RequestID.integer(Int64(100 + op.count))
                var object = JSONObject([("id", id.json), ("op", .string(op))])
                for (key, value) in fields { object[key] = value }
                client.send(text: JSONValue.object(object).serialized())
                f.settle()
                #expect(client.reply(to: id)?.errorCode == "ERR_NOT_LOGGED_IN", "\(op)")
                #expect(!client.isClosed)
            }
            #expect(bystander.watcher.presence.isEmpty)
            #expect(client.login(uid: "bob", device: "b")?.resultUser?.uid == "bob")
            let again = client.login(uid: "bob", device: "b")
            #expect(again?.errorCode == "ERR_ALREADY_LOGGED_IN")
            let other = client.login(uid: "carol", device: "c")
            #expect(other?.errorCode == "ERR_ALREADY_LOGGED_IN")
            let byToken = client.login(uid: nil, device: "c", token: "carol-token")
            #expect(byToken?.errorCode == "ERR_ALREADY_LOGGED_IN")
            #expect(!client.isClosed)
            #expect(client.request("ping")?.resultObject?["pong"] == true)
            #expect(f.server.engine.onlineUsers == ["alice", "bob"])
            #expect(bystander.events(about: "bob") == ["user.online"])
            #expect(bystander.events(about: "carol").isEmpty)
            reportFigure(21, "4 operations before login: ERR_NOT_LOGGED_IN, open; 3 second logins: ERR_ALREADY_LOGGED_IN, open, "
                         + "presence unchanged")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row22_refusedLoginsGetTheirErrorThenClose4003() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let cases: [(String, String)] = [
                (loginText(uid: "nobody", device: "d"), "ERR_UID_NOT_FOUND"),
                (loginText(uid: "carol", device: "d").replacingOccurrences(of: "mockchat-dev-key", with: "guess"), "ERR_AUTH_FAILED"),
                (loginText(uid: "alice", device: "d").replacingOccurrences(of: "mockchat-dev-key", with: ""), "ERR_AUTH_FAILED"),
                (loginText(uid: "oscar", device: "d"), "ERR_USER_DEACTIVATED"),
                (requestText(1, "login", #""token":"stolen","deviceId":"d""#), "ERR_AUTH_FAILED"),
                (requestText(1, "login", #""uid":"alice","token":"carol-token","deviceId":"d""#), "ERR_AUTH_FAILED"),
                (requestText(1, "login", #""token":"oscar-token","deviceId":"d""#), "ERR_USER_DEACTIVATED"),
            ]
            for (login, code) in cases {
                let raw = try f.rawWebSocket()
                raw.write(ClientFrame.text(login))
                #expect(f.loop.run(timeout: 5) { raw.sawCloseFrame }, "\(code): no close frame")
                // Answer the close, as a client should; the server then ends the stream.
                let closed = f.sendAndAwaitClose(raw, ClientFrame.close(4003))
                #expect(closed, "\(code): still open")
                #expect(raw.messages.count == 1)
                #expect(raw.messages.first?.errorCode == code, "\(login)")
                #expect(raw.closeCode == 4003, "\(login)")
                #expect(raw.closeReason == code)
            }
            // alice, the bystander, was named in two refused logins and is untouched.
            #expect(bystander.watcher.presence.isEmpty)
            #expect(f.server.engine.onlineUsers == ["alice"])
            #expect(f.server.sessionCount == 1)
            reportFigure(22, "\(cases.count) refused logins: documented error, then close 4003 with the code as reason; no presence event")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row23_outOfRangeOrNonIntegerLimitsAreRefused() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let client = try f.loggedIn("bob", device: "b")
            let bad = ["0", "101", "-1", "1000000000000", "9223372036854775807", "9223372036854775808",
                       "-9223372036854775809", "99999999999999999999999999", "1e300", "2.5", "10.0", "1e1", "\"10\"",
                       "true", "[]", "{}"]
            for (index, limit) in bad.enumerated() {
                let id = 200 + index
                client.send(text: requestText(id, "users.list", "\"limit\":\(limit)"))
                f.settle()
                let reply = client.reply(to: .integer(Int64(id)))
                #expect(reply?.errorCode == "ERR_INVALID_LIMIT", "limit \(limit): \(String(describing: reply))")
            }
            // A number beyond a double's range does not even parse: the frame is not JSON.
            client.send(text: requestText(300, "users.list", "\"limit\":1e400"))
            f.settle()
            #expect(client.messages.last?.errorCode == "ERR_BAD_REQUEST")
            // null counts as an absent limit (the default, 30), like null in other optional fields.
            #expect(client.request("users.list", ["limit": nil])?.listedUIDs?.count == 14)
            #expect(client.request("users.list", ["limit": 1])?.listedUIDs?.count == 1)
            #expect(client.request("users.list", ["limit": 100])?.listedUIDs?.count == 14)
            #expect(!client.isClosed)
            reportFigure(23, "\(bad.count) bad limits refused with ERR_INVALID_LIMIT; 1 and 100 served")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        /// A server whose fixture makes each presence event about bob ~50 KB, alice
        /// watching, and dave logged in and about to stop reading.
        private final class SlowConsumerScene {
            let f: ServerFixture
            let bystander: Bystander
            let slow: TestClient
            var cycles = 0
            var quietRTT: [Double] = []
            var busyRTT: [Double] = []
            private var traceStart = 0

            init() throws {
                f = try ServerFixture()
                var users = try #require(try JSONParser.parse(EmbeddedFixtures.users)["users"]?.arrayValue)
                for index in users.indices where users[index]["uid"]?.stringValue == "bob" {
                    var object = try #require(users[index].objectValue)
                    object["statusMessage"] = .string(String(repeating: "z", count: 50_000))
                    users[index] = .object(object)
                }
                let load = try f.control("POST", "/control/fixtures",
                                         body: JSONValue.object(JSONObject([("users", .array(users))])).serialized())
                #expect(load.status == 200)
                bystander = try Bystander(f)
                slow = try f.loggedIn("dave", device: "slow", presence: .allUsers)
            }

            /// alice's ping, waited for without settling (the paused client would keep the
            /// loop from settling): answered with the virtual time it was sent at. Returns
            /// the wall-clock round trip.
            func pingAlice() -> Double? {
                let alice = bystander.watcher
                let sentAt = f.now
                var pong: ServerMessage?
                let seconds = ProcessProbe.seconds {
                    let id = alice.send("ping")
                    _ = f.loop.run(timeout: 5) { alice.reply(to: id) != nil }
                    pong = alice.reply(to: id)
                }
                #expect(pong?.resultObject?["serverTime"]?.doubleValue == sentAt.seconds)
                return pong == nil ? nil : seconds
            }

            /// The server's 4008 close of dave, once it happened.
            var cut: TraceLog.Entry? {
                f.server.trace.entries(after: traceStart).first { $0.kind == .close && $0.code == 4008 }
            }

            /// Bytes of events the server wrote (or queued) to dave since he stopped reading.
            var bytesToSlow: Int {
                f.server.trace.entries(after: traceStart).filter { $0.kind == .out && $0.uid == "dave" }
                    .compactMap { $0.frame?.serialized().utf8.count }.reduce(0, +)
            }

            /// bob connects, logs in and drops, again and again, until dave is cut off:
            /// each time alice and dave get a user.online and a user.offline of ~50 KB.
            func flood() throws {
                quietRTT = (0..<20).compactMap { _ in pingAlice() }.sorted()
                slow.socket.connection.pauseReading()
                traceStart = f.server.trace.entries.last?.sequence ?? 0
                let handshake = Array(handshakeRequest().utf8)
                while cut == nil && cycles < 2_000 {
                    let raw = try f.rawConnect()
                    raw.write(handshake + ClientFrame.text(loginText(uid: "bob", device: "flood-\(cycles)")))
                    _ = f.loop.run(timeout: 5) { !raw.messages.isEmpty }
                    raw.connection.close()
                    let expected = 2 * (cycles + 1)
                    #expect(f.loop.run(timeout: 5) { self.bystander.events(about: "bob").count == expected },
                            "alice missed presence events in cycle \(cycles)")
                    cycles += 1
                    if cycles % 5 == 0, let rtt = pingAlice() { busyRTT.append(rtt) }
                }
                busyRTT.sort()
                #expect(cut != nil, "the paused client was never cut off")
                #expect(cut?.uid == "dave")
                #expect(cut?.text == "server closes: outbound queue overflow")
                // Presence stays consistent: dave went offline exactly once, at once.
                #expect(bystander.events(about: "dave") == ["user.online", "user.offline"])
                #expect(!f.server.engine.isOnline("dave"))
                #expect(bystander.events(about: "bob").count == 2 * cycles)
            }

            func median(_ values: [Double]) -> Int { values.isEmpty ? 0 : Int(values[values.count / 2] * 1e6) }
        }

        @Test func row24_aClientThatStopsReadingIsCutOffAndOthersKeepTheirTiming() throws {
            let scene = try SlowConsumerScene()
            let f = scene.f
            try scene.flood()
            // dave never reads again: his TCP stream is cut when the close handshake times out.
            let closeTimeout = WebSocket.Configuration().closeTimeout
            let cutAt = f.now
            f.loop.clock.advance(to: cutAt.advanced(by: closeTimeout - 1))
            #expect(f.server.openConnectionCount == 2)
            f.loop.clock.advance(to: cutAt.advanced(by: closeTimeout))
            #expect(f.loop.run(timeout: 5) { f.server.openConnectionCount == 1 })
            #expect(f.server.trace.entries.last { $0.kind == .close }?.text == "closed: peer did not finish the closing handshake")
            // What reaches him afterwards is the backlog the kernel held, then the end.
            scene.slow.socket.connection.resumeReading()
            #expect(f.loop.run(timeout: 20) { scene.slow.isClosed })
            #expect(scene.slow.closeInfo?.received == nil)
            #expect(scene.slow.closeInfo?.abnormal != nil)
            // The bytes the server dropped when it cut dave off were written off at his end
            // of stream, so the loop settles again.
            #expect(f.loop.settle())
            #expect(scene.pingAlice() != nil)
            let probe = try f.rawConnect()
            probe.write(Array(handshakeRequest().utf8) + ClientFrame.text(loginText(uid: "erin", device: "probe")))
            #expect(f.loop.run(timeout: 5) { scene.bystander.events(about: "erin") == ["user.online"] })
            probe.connection.close()
            #expect(f.loop.run(timeout: 5) { scene.bystander.events(about: "erin") == ["user.online", "user.offline"] })
            reportFigure(24, "paused client cut with 4008 after \(scene.cycles) flood cycles (\(scene.bytesToSlow / 1024) KiB "
                         + "of events for it; user-space queue limit \(ChatServer.Configuration().outboundQueueLimit / 1024) KiB), "
                         + "TCP cut \(closeTimeout) ms of clock time later; bystander pings answered at the virtual send time, "
                         + "median wall RTT \(scene.median(scene.quietRTT)) µs quiet vs \(scene.median(scene.busyRTT)) µs during the flood")
            #expect(f.shutdown() == 0)
        }

        @Test func row24_aSlowConsumerThatCatchesUpReadsTheClose4008() throws {
            let scene = try SlowConsumerScene()
            let f = scene.f
            try scene.flood()
            // dave starts reading again before the close times out: after the backlog he
            // reads the 4008 close frame, answers it, and the handshake completes.
            scene.slow.socket.connection.resumeReading()
            #expect(f.loop.run(timeout: 20) { scene.slow.isClosed })
            #expect(scene.slow.closeInfo?.received == 4008)
            #expect(scene.slow.closeInfo?.sent == 4008)
            #expect(scene.slow.closeInfo?.abnormal == nil)
            f.settle()
            #expect(f.server.openConnectionCount == 1)
            reportFigure(24, "a paused client that resumes within the close timeout reads the backlog and then close 4008")
            scene.bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }
    }
}
