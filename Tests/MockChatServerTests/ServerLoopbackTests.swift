import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

/// The server over real loopback sockets, clients on the same loop, virtual time.
@Suite struct ServerLoopbackTests {
    // MARK: Handshake

    @Test func invalidHandshakesAreRejectedWithTheRightStatus() throws {
        let f = try ServerFixture()
        let post = try f.rawHTTP(handshakeRequest(method: "POST"))
        #expect(post.status == 400)
        #expect(post.text.contains("GET"))
        let http10 = try f.rawHTTP(handshakeRequest(version: "HTTP/1.0"))
        #expect(http10.status == 400)
        #expect(http10.text.contains("HTTP/1.1"))
        let badKey = try f.rawHTTP(handshakeRequest(key: "not-a-key"))
        #expect(badKey.status == 400)
        #expect(badKey.text.contains("Sec-WebSocket-Key"))
        let version8 = try f.rawHTTP(handshakeRequest(wsVersion: "8"))
        #expect(version8.status == 426)
        #expect(version8.headerValues("Sec-WebSocket-Version") == ["13"])
        let huge = try f.rawHTTP(handshakeRequest(extraHeaders: "X-Padding: " + String(repeating: "a", count: 9_000) + "\r\n"))
        #expect(huge.status == 431)
        let unknownPath = try f.rawHTTP(handshakeRequest(path: "/v2/socket"))
        #expect(unknownPath.status == 404)
        #expect(unknownPath.json?["error"]?.stringValue?.contains("/v1/ws") == true)
        let plainGet = try f.rawHTTP("GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(plainGet.status == 426)
        #expect(plainGet.json?["error"] != nil)
        for reply in [post, http10, badKey, version8, huge, unknownPath, plainGet] {
            #expect(reply.headerValues("Content-Length") == ["\(reply.body.count)"])
        }
        f.settle()
        #expect(f.server.sessionCount == 0)
        #expect(f.server.engine.connections.isEmpty)
        #expect(f.server.openConnectionCount == 0)
        #expect(f.shutdown() == 0)
    }

    @Test func handshakeAndFirstFrameInOneWriteAreBothProcessed() throws {
        let f = try ServerFixture()
        let watcher = try f.loggedIn("bob", device: "bob-laptop")
        let raw = try f.rawConnect()
        let login = #"{"id":"L1","op":"login","uid":"alice","authKey":"mockchat-dev-key","deviceId":"raw","platform":"web"}"#
        raw.write(Array(handshakeRequest().utf8) + ClientFrame.text(login))
        #expect(f.loop.run(timeout: 5) { !raw.frames.isEmpty })
        let head = try #require(HTTPReply(raw.received))
        #expect(head.status == 101)
        #expect(head.headerValues("Sec-WebSocket-Accept") == ["s3pPLMBiTxaQ9kYGzzhZRbK+xOo="])
        let reply = try #require(raw.frames.first)
        #expect(reply.opcode == 1)
        let message = try #require(ServerMessage(json: try JSONParser.parse(reply.text)))
        #expect(message.requestID == .string("L1"))
        #expect(message.resultObject?["connectionId"] == "c2")
        #expect(message.resultUser?.uid == "alice")
        f.settle()
        #expect(watcher.presence.map(\.user.uid) == ["alice"])
        // Ending the raw stream ends the session like any other loss.
        raw.connection.close()
        f.settle()
        #expect(watcher.presence.map { "\($0.event) \($0.user.uid)" } == ["user.online alice", "user.offline alice"])
        #expect(f.server.sessionCount == 1)
    }

    // MARK: Login

    @Test func refusedLoginsGetAnErrorThenClose4003() throws {
        let f = try ServerFixture()
        for (uid, key, code) in [("nobody", "mockchat-dev-key", ErrorCode.uidNotFound),
                                 ("alice", "guess", .authFailed), ("oscar", "mockchat-dev-key", .userDeactivated)] {
            let client = try f.connect()
            let reply = client.login(uid: uid, device: "d", authKey: key)
            #expect(reply?.errorCode == code.rawValue, "\(uid)")
            #expect(client.closeInfo?.received == CloseCode.loginFailed.rawValue, "\(uid)")
            #expect(client.closeInfo?.sent == CloseCode.loginFailed.rawValue, "\(uid)")
            #expect(client.messages.count == 1)
        }
        let badToken = try f.connect()
        #expect(badToken.login(uid: nil, device: "d", token: "stolen")?.errorCode == "ERR_AUTH_FAILED")
        #expect(badToken.closeInfo?.received == 4003)
        // A malformed login is an error reply; the socket stays open for a proper one.
        let sloppy = try f.connect()
        let invalid = sloppy.request("login", ["deviceId": "d"])
        #expect(invalid?.errorCode == "ERR_INVALID_FIELD")
        #expect(!sloppy.isClosed)
        #expect(sloppy.login(uid: nil, device: "d", token: "alice-token")?.resultUser?.uid == "alice")
        #expect(f.server.engine.onlineUsers == ["alice"])
    }

    @Test func theLoginFrameAndARefusedLoginsCloseNameTheUidAndDevice() throws {
        let f = try ServerFixture()
        let refused = try f.connect()
        _ = refused.login(uid: "nobody", device: "ghost-phone")
        let accepted = try f.connect()
        _ = accepted.login(uid: "alice", device: "alice-phone")
        let entries = f.server.trace.entries
        let logins = entries.filter { $0.kind == .in && $0.frame?["op"]?.stringValue == "login" }
        #expect(logins.map(\.uid) == ["nobody", "alice"])
        #expect(logins.map(\.deviceId) == ["ghost-phone", "alice-phone"])
        let closes = entries.filter { $0.kind == .close }
        #expect(!closes.isEmpty)
        #expect(closes.allSatisfy { $0.uid == "nobody" && $0.deviceId == "ghost-phone" })
    }

    @Test func requestsBeforeLoginAndDoubleLoginAreRefused() throws {
        let f = try ServerFixture()
        let client = try f.connect()
        #expect(client.request("ping")?.errorCode == "ERR_NOT_LOGGED_IN")
        #expect(client.request("users.list")?.errorCode == "ERR_NOT_LOGGED_IN")
        #expect(client.login(uid: "alice", device: "a")?.resultUser?.uid == "alice")
        #expect(client.login(uid: "bob", device: "b")?.errorCode == "ERR_ALREADY_LOGGED_IN")
        #expect(!client.isClosed)
        #expect(f.server.engine.onlineUsers == ["alice"])
    }

    @Test func pingIsAckedWithTheVirtualServerTime() throws {
        let f = try ServerFixture()
        let client = try f.loggedIn("alice", device: "a")
        f.advance(seconds: 12.25)
        let pong = try #require(client.request("ping"))
        #expect(pong.resultObject?["pong"] == true)
        #expect(pong.resultObject?["serverTime"] == .double(Instant.virtualEpoch.seconds + 12.25))
        f.advance(milliseconds: 1)
        #expect(client.request("ping")?.resultObject?["serverTime"]?.doubleValue == 1_700_000_012.251)
    }

    // MARK: Presence

    @Test func presenceFollowsEachSubscriptionMode() throws {
        let f = try ServerFixture()
        let all = try f.loggedIn("peggy", device: "p", presence: .allUsers)
        let friends = try f.loggedIn("alice", device: "a", presence: .friends)
        let roles = try f.loggedIn("trent", device: "t", presence: .roles(["moderator"]))
        let none = try f.loggedIn("judy", device: "j", presence: .none)
        for client in [all, friends, roles, none] { client.clear() }

        let bob = try f.loggedIn("bob", device: "b", presence: .none)  // default role, alice's friend
        _ = try f.loggedIn("carol", device: "c", presence: .none)  // moderator, alice's friend
        _ = try f.loggedIn("erin", device: "e", presence: .none)  // default role, not alice's friend
        bob.close()
        f.settle()
        func seen(_ client: TestClient) -> [String] { client.presence.map { "\($0.event) \($0.user.uid)" } }
        #expect(seen(all) == ["user.online bob", "user.online carol", "user.online erin", "user.offline bob"])
        #expect(seen(friends) == ["user.online bob", "user.online carol", "user.offline bob"])
        #expect(seen(roles) == ["user.online carol"])
        #expect(seen(none) == [])
        #expect(bob.presence.isEmpty)
        #expect(bob.closeInfo?.received == 1000)
        // Events carry the live status.
        #expect(all.presence.map(\.user.status) == [.online, .online, .online, .offline])
    }

    @Test func blockedFlagsInEventsDependOnTheViewer() throws {
        let f = try ServerFixture()
        let carol = try f.loggedIn("carol", device: "c")
        let bob = try f.loggedIn("bob", device: "b")
        carol.clear()
        bob.clear()
        _ = try f.loggedIn("mallory", device: "m")
        let carolSees = try #require(carol.presence.first?.user)
        let bobSees = try #require(bob.presence.first?.user)
        #expect(carolSees.uid == "mallory" && carolSees.blockedByMe && !carolSees.hasBlockedMe)
        #expect(bobSees.uid == "mallory" && !bobSees.blockedByMe && !bobSees.hasBlockedMe)
    }

    @Test func aUserWithSeveralDevicesGoesOnlineAndOfflineOnce() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a", presence: .friends)
        alice.clear()
        let desktop = try f.loggedIn("bob", device: "bob-desktop", platform: .desktop)
        let web = try f.loggedIn("bob", device: "bob-web", platform: .web)
        let phone = try f.loggedIn("bob", device: "bob-phone", platform: .mobile)
        #expect(alice.presence.map(\.event) == ["user.online"])
        #expect(try f.control("GET", "/control/presence").json?["online"] == ["alice", "bob"])
        desktop.close()
        f.settle()
        web.drop()
        f.settle()
        #expect(alice.presence.count == 1)
        #expect(f.server.engine.isOnline("bob"))
        f.advance(seconds: 3)
        #expect(phone.request("logout")?.resultObject == JSONObject())
        #expect(phone.closeInfo?.received == 1000)
        #expect(alice.presence.map(\.event) == ["user.online", "user.offline"])
        #expect(alice.presence.last?.user.lastActiveAt == Instant.virtualEpoch.seconds + 3)
        #expect(desktop.events.isEmpty && web.events.isEmpty && phone.events.isEmpty)
    }

    @Test func abruptConnectionLossSendsExactlyOneOffline() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let bob = try f.loggedIn("bob", device: "b", platform: .mobile)
        alice.clear()
        f.advance(seconds: 7)
        bob.drop()
        f.settle()
        f.advance(seconds: 60)  // nothing more comes later either (alice times out herself)
        let offline = alice.presence.filter { $0.event == "user.offline" }
        #expect(offline.count == 1)
        #expect(offline.first?.user.uid == "bob")
        #expect(offline.first?.user.lastActiveAt == Instant.virtualEpoch.seconds + 7)
        #expect(bob.closeInfo?.received == nil)
        #expect(bob.closeInfo?.abnormal != nil)
        #expect(!f.server.engine.isOnline("bob"))
    }

    // MARK: Device policy

    @Test func aNewMobileKicksTheOldOneWith4001() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let laptop = try f.loggedIn("bob", device: "bob-laptop", platform: .desktop)
        let phone1 = try f.loggedIn("bob", device: "phone-1", platform: .mobile)
        alice.clear()
        let phone2 = try f.connect()
        #expect(phone2.login(uid: "bob", device: "phone-2", platform: .mobile)?.resultUser?.uid == "bob")
        #expect(phone1.messages == [.deviceKicked(reason: "another mobile device logged in", byDeviceId: "phone-2",
                                                  byPlatform: .mobile)])
        #expect(phone1.closeInfo?.received == 4001)
        #expect(!laptop.isClosed && laptop.events.isEmpty)
        #expect(alice.messages.isEmpty)
        #expect(f.server.engine.connections.filter { $0.uid == "bob" }.map(\.deviceId) == ["bob-laptop", "phone-2"])
    }

    @Test func reconnectKickEnableIsRefusedWhenTheAppSwitchIsOn() throws {
        let f = try ServerFixture()
        let early = try f.loggedIn("dave", device: "d")
        let switched = try f.control("POST", "/control/fixtures", body: #"{"app":{"clientKickControl":true}}"#)
        #expect(switched.status == 200)
        #expect(switched.json?["ok"] == true)
        #expect(f.server.engine.settings.clientKickControl)
        #expect(early.closeInfo?.received == CloseCode.closedByControl.rawValue)

        let phone1 = try f.loggedIn("bob", device: "phone-1", platform: .mobile)
        let phone2 = try f.connect()
        let refused = phone2.login(uid: "bob", device: "phone-2", platform: .mobile, reconnect: true,
                                   reconnectKickEnable: true)
        #expect(refused?.errorCode == "ERR_RECONNECT_KICK_REFUSED")
        #expect(phone2.closeInfo?.received == 4004)
        #expect(phone1.messages.isEmpty)
        #expect(!phone1.isClosed)
        #expect(phone1.request("ping")?.resultObject?["pong"] == true)
    }

    @Test func reconnectKickEnableIsIgnoredWhenTheAppSwitchIsOff() throws {
        let f = try ServerFixture()
        let phone1 = try f.loggedIn("bob", device: "phone-1", platform: .mobile)
        let phone2 = try f.connect()
        let reply = phone2.login(uid: "bob", device: "phone-2", platform: .mobile, reconnect: true,
                                 reconnectKickEnable: true)
        #expect(reply?.resultUser?.uid == "bob")
        #expect(phone1.events.first == .deviceKicked(reason: "another mobile device logged in",
                                                     byDeviceId: "phone-2", byPlatform: .mobile))
        #expect(phone1.closeInfo?.received == 4001)
        #expect(!phone2.isClosed)
    }

    // MARK: Heartbeat

    @Test func heartbeatClosesWith4002ThirtySecondsAfterTheLastFrame() throws {
        let f = try ServerFixture()
        let t0 = f.now
        let alice = try f.loggedIn("alice", device: "a")
        f.advance(seconds: 1)
        let bob = try f.loggedIn("bob", device: "b")
        f.advance(to: t0.advanced(by: 29_999))
        #expect(!alice.isClosed)
        f.advance(milliseconds: 1)
        #expect(alice.closeInfo?.received == CloseCode.heartbeatTimeout.rawValue)
        #expect(alice.closedAt == t0.advanced(by: 30_000))
        #expect(!bob.isClosed)
        let offline = try #require(bob.presence.last)
        #expect(offline.event == "user.offline" && offline.user.uid == "alice")
        #expect(offline.user.lastActiveAt == t0.advanced(by: 30_000).seconds)
        f.advance(milliseconds: 999)
        #expect(!bob.isClosed)
        f.advance(milliseconds: 1)
        #expect(bob.closeInfo?.received == 4002)
        #expect(bob.closedAt == t0.advanced(by: 31_000))
    }

    @Test func aPingPostponesTheHeartbeatDeadline() throws {
        let f = try ServerFixture()
        let t0 = f.now
        let alice = try f.loggedIn("alice", device: "a")
        f.advance(seconds: 25)
        #expect(alice.request("ping")?.resultObject?["pong"] == true)
        f.advance(to: t0.advanced(by: 54_999))
        #expect(!alice.isClosed)
        // A WebSocket ping frame counts as a sign of life too.
        alice.socket.sendPing()
        f.settle()
        f.advance(to: t0.advanced(by: 84_998))
        #expect(!alice.isClosed)
        f.advance(milliseconds: 1)
        #expect(alice.closeInfo?.received == 4002)
        #expect(alice.closedAt == t0.advanced(by: 84_999))
    }

    @Test func anUnauthenticatedConnectionTimesOutToo() throws {
        let f = try ServerFixture { $0.heartbeatTimeoutMilliseconds = 5_000 }
        let t0 = f.now
        let idle = try f.connect()
        f.advance(seconds: 4.999)
        #expect(!idle.isClosed)
        f.advance(milliseconds: 1)
        #expect(idle.closeInfo?.received == 4002)
        #expect(idle.closedAt == t0.advanced(by: 5_000))
    }

    // MARK: Queries

    @Test func usersListAndGetOverTheSocket() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        _ = try f.loggedIn("heidi", device: "h")
        let first = try #require(alice.request("users.list", ["limit": 5]))
        #expect(first.listedUIDs == ["alice", "bob", "carol", "dave", "erin"])
        #expect(first.nextCursor == "after:erin")
        let second = try #require(alice.request("users.list", ["limit": 5, "cursor": "after:erin"]))
        #expect(second.listedUIDs == ["frank", "grace", "heidi", "ivan", "judy"])
        let third = try #require(alice.request("users.list", ["limit": 5, "cursor": .string(second.nextCursor ?? "")]))
        #expect(third.listedUIDs == ["mallory", "oscar", "peggy", "trent"])
        #expect(third.resultObject?["next"] == .null)
        let online = try #require(alice.request("users.list", ["status": "online"]))
        #expect(online.listedUIDs == ["alice", "heidi"])
        for limit: JSONValue in [0, 101, -1, 1e12, 2.5, "5"] {
            #expect(alice.request("users.list", ["limit": limit])?.errorCode == "ERR_INVALID_LIMIT", "\(limit)")
        }
        let bob = try #require(alice.request("users.get", ["uid": "bob"])?.resultUser)
        #expect(bob.name == "Bob Chen" && bob.status == .offline && bob.lastActiveAt == 1_699_982_800)
        #expect(alice.request("users.get", ["uid": "heidi"])?.resultUser?.status == .online)
        #expect(alice.request("users.get", ["uid": "zed"])?.errorCode == "ERR_UID_NOT_FOUND")
        #expect(alice.request("users.get")?.errorCode == "ERR_INVALID_FIELD")
        #expect(!alice.isClosed)
        #expect(alice.unparsed.isEmpty)
    }

    // MARK: Malformed frames

    @Test func aMalformedFrameIsAnsweredAndEverythingKeepsWorking() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let bob = try f.loggedIn("bob", device: "b")
        alice.clear()
        bob.clear()
        alice.send(text: "{\"id\": 1, \"op\": \"ping\"")
        f.settle()
        guard case .error(let id, let error)? = alice.messages.last else {
            Issue.record("no error reply: \(alice.messages)")
            return
        }
        #expect(id == nil)
        #expect(error.code == "ERR_BAD_REQUEST")
        alice.send(text: "[1,2,3]")
        alice.send(text: #"{"op":"ping"}"#)
        f.settle()
        #expect(alice.messages.compactMap(\.errorCode) == ["ERR_BAD_REQUEST", "ERR_BAD_REQUEST", "ERR_BAD_REQUEST"])
        #expect(!alice.isClosed)
        #expect(alice.request("ping")?.resultObject?["pong"] == true)
        #expect(bob.request("ping")?.resultObject?["pong"] == true)
        _ = try f.loggedIn("carol", device: "c")
        #expect(alice.presence.map(\.user.uid) == ["carol"])
        #expect(bob.presence.map(\.user.uid) == ["carol"])
        // The unparsable frame is in the trace as text.
        #expect(f.server.trace.entries.contains { $0.kind == .in && $0.text == "{\"id\": 1, \"op\": \"ping\"" })
    }

    // MARK: Control API

    @Test func faultDropCutsTheConnectionAndAnnouncesOneOffline() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let bob = try f.loggedIn("bob", device: "b")
        alice.clear()
        f.advance(seconds: 2)
        let reply = try f.control("POST", "/control/faults", body: #"{"fault":"drop","uid":"bob"}"#)
        #expect(reply.status == 200)
        #expect(reply.json?["affected"] == 1)
        #expect(bob.isClosed)
        #expect(bob.closeInfo?.received == nil)
        #expect(alice.presence.map { "\($0.event) \($0.user.uid)" } == ["user.offline bob"])
        #expect(alice.presence.first?.user.lastActiveAt == Instant.virtualEpoch.seconds + 2)
        let unknown = try f.control("POST", "/control/faults", body: #"{"fault":"drop","connection":"c99"}"#)
        #expect(unknown.status == 404)
        let vague = try f.control("POST", "/control/faults", body: #"{"fault":"drop"}"#)
        #expect(vague.status == 400)
        #expect(!alice.isClosed)
    }

    @Test func faultBlackholeSwallowsFramesUntilTheHeartbeatCloses() throws {
        let f = try ServerFixture()
        let t0 = f.now
        let bob = try f.loggedIn("bob", device: "b")
        let watcher = try f.loggedIn("dave", device: "d")
        f.advance(seconds: 5)
        let reply = try f.control("POST", "/control/faults", body: #"{"fault":"blackhole","uid":"bob"}"#)
        #expect(reply.status == 200)
        #expect(reply.json?["affected"] == 1)
        bob.clear()
        f.advance(seconds: 5)
        let ping = bob.send("ping")
        f.settle()
        #expect(bob.reply(to: ping) == nil)
        // Nothing is sent to a blackholed connection either.
        _ = try f.loggedIn("carol", device: "c")
        #expect(bob.messages.isEmpty)
        #expect(watcher.presence.map(\.user.uid).contains("carol"))
        #expect(f.server.trace.entries.contains { $0.kind == .fault && $0.text == "blackhole: outbound frame discarded" })
        watcher.send("ping")  // keeps the watcher alive past bob's deadline
        f.settle()
        f.advance(to: t0.advanced(by: 29_999))
        #expect(!bob.isClosed)
        f.advance(milliseconds: 1)
        // The heartbeat ends the session; on a dead path the close frame is lost, so
        // the stream is simply cut.
        #expect(bob.isClosed)
        #expect(bob.closeInfo?.received == nil)
        #expect(bob.closedAt == t0.advanced(by: 30_000))
        #expect(f.server.trace.entries.contains { $0.kind == .close && $0.uid == "bob" && $0.code == 4002 })
        #expect(watcher.presence.last?.event == "user.offline")
        #expect(watcher.presence.last?.user.uid == "bob")
        #expect(f.server.trace.entries.contains { $0.kind == .fault && $0.uid == "bob" })
    }

    @Test func faultRefuseConnectionsCutsNewHandshakesOnly() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"refuseConnections"}"#).status == 200)
        #expect(f.tryConnect().map { (try? $0.get()) == nil } == true)
        if case .failure(let failure)? = f.tryConnect() {
            #expect(failure == .closed)
        } else {
            Issue.record("a handshake got through")
        }
        let health = try f.control("GET", "/control/health")
        #expect(health.status == 200)
        #expect(health.json?["ok"] == true)
        #expect(health.json?["clock"] == "virtual")
        #expect(try f.control("GET", "/control/faults").json?["refuseConnections"] == true)
        #expect(alice.request("ping")?.resultObject?["pong"] == true)
        #expect(f.server.sessionCount == 1)
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"refuseConnections","enabled":false}"#).status == 200)
        #expect(try f.loggedIn("bob", device: "b").isClosed == false)
    }

    @Test func faultDelayHoldsFramesUntilTheClockMoves() throws {
        let f = try ServerFixture()
        let t0 = f.now
        let alice = try f.loggedIn("alice", device: "a")
        let bob = try f.loggedIn("bob", device: "b")
        let reply = try f.control("POST", "/control/faults", body: #"{"fault":"delay","uid":"bob","ms":500}"#)
        #expect(reply.status == 200)
        let ping = bob.send("ping")
        f.settle()
        #expect(bob.reply(to: ping) == nil)
        #expect(alice.request("ping") != nil, "other connections are not delayed")
        f.advance(milliseconds: 499)
        #expect(bob.reply(to: ping) == nil)
        f.advance(milliseconds: 1)
        let pong = try #require(bob.reply(to: ping))
        #expect(pong.resultObject?["serverTime"]?.doubleValue == t0.seconds)
        #expect(try f.control("DELETE", "/control/faults").status == 200)
        #expect(bob.request("ping") != nil)
        let bad = try f.control("POST", "/control/faults", body: #"{"fault":"delay","uid":"bob","ms":-5}"#)
        #expect(bad.status == 400)
    }

    @Test func badControlRequestsAre400AndChangeNothing() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"delay","uid":"alice","ms":100}"#).status == 200)
        let before = try f.control("GET", "/control/faults").json
        let settingsBefore = f.server.engine.settings
        let traceBefore = f.server.trace.entries.count

        let cases: [(String, String, String)] = [
            ("/control/faults", "{not json", "not valid JSON"),
            ("/control/faults", "[1]", "JSON object"),
            ("/control/faults", #"{"fault":"meteor","uid":"alice"}"#, "unknown fault 'meteor'"),
            ("/control/faults", #"{"uid":"alice"}"#, "fault"),
            ("/control/fixtures", #"{"app":{"heartbeatTimeout":-1}}"#, "heartbeatTimeout"),
            ("/control/fixtures", #"{"users":[{"uid":"x","friends":["ghost"]}]}"#, "ghost"),
            ("/control/fixtures", #"{}"#, "users"),
            ("/control/clock/advance", #"{"ms":-1}"#, "must be an integer from 0"),
        ]
        for (path, body, hint) in cases {
            let reply = try f.control("POST", path, body: body)
            #expect(reply.status == 400, "\(path) \(body)")
            let message = reply.json?["error"]?.stringValue ?? ""
            #expect(message.contains(hint), "\(path) \(body): \(message)")
        }
        #expect(try f.control("GET", "/control/faults").json == before)
        #expect(f.server.engine.settings == settingsBefore)
        #expect(f.server.engine.directory.records.count == 14)
        #expect(!alice.isClosed)
        #expect(f.server.trace.entries.count == traceBefore)
        #expect(try f.control("GET", "/control/nothing").status == 404)
    }

    @Test func controlConnectionsListsEverySession() throws {
        let f = try ServerFixture()
        _ = try f.loggedIn("alice", device: "alice-phone", platform: .mobile)
        f.advance(seconds: 1.5)
        _ = try f.connect()
        f.advance(seconds: 1)
        let reply = try f.control("GET", "/control/connections")
        #expect(reply.status == 200)
        #expect(reply.headerValues("Content-Type") == ["application/json"])
        let t0 = Instant.virtualEpoch.seconds
        #expect(reply.json == [
            "connections": [
                ["id": "c1", "uid": "alice", "deviceId": "alice-phone", "platform": "mobile", "state": "logged-in",
                 "openedAt": .double(t0), "lastInboundAt": .double(t0), "lastPingAt": nil, "subscription": ["mode": "all"]],
                ["id": "c2", "uid": nil, "deviceId": nil, "platform": nil, "state": "awaiting-login",
                 "openedAt": .double(t0 + 1.5), "lastInboundAt": .double(t0 + 1.5), "lastPingAt": nil, "subscription": nil],
            ],
        ])
    }

    @Test func controlTraceListsFramesAsJSONLines() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        f.advance(seconds: 1)
        _ = alice.request("ping")
        let reply = try f.control("GET", "/control/trace")
        #expect(reply.status == 200)
        #expect(reply.headerValues("Content-Type") == ["application/x-ndjson"])
        let lines = reply.text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        #expect(lines.count == reply.text.split(separator: "\n").count)
        #expect(lines.map { $0["kind"]?.stringValue ?? "?" } == ["open", "in", "out", "in", "out"])
        #expect(lines.map { $0["seq"]?.intValue ?? 0 } == [1, 2, 3, 4, 5])
        #expect(lines[0]["text"] == "127.0.0.1", "the peer's host, without its ephemeral port")
        #expect(lines[1]["frame"]?["op"] == "login")
        #expect(lines[2]["frame"]?["result"]?["connectionId"] == "c1")
        #expect(lines[3]["uid"] == "alice" && lines[3]["device"] == "a" && lines[3]["conn"] == "c1")
        #expect(lines[4]["t"] == .double(Instant.virtualEpoch.seconds + 1))
        let since = try f.control("GET", "/control/trace?since=3")
        #expect(since.text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0))["seq"]?.intValue }
            == [4, 5])
    }

    @Test func controlResetClosesEverythingAndRestoresTheFixtures() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        #expect(try f.control("POST", "/control/fixtures", body: #"{"app":{"heartbeatTimeout":5}}"#).status == 200)
        #expect(alice.closeInfo?.received == 4009)
        #expect(f.server.engine.settings.heartbeatTimeoutMilliseconds == 5_000)
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"refuseConnections"}"#).status == 200)
        #expect(throws: WebSocketClient.Failure.closed) { _ = try f.connect() }
        #expect(f.server.sessionCount == 0)
        let reset = try f.control("POST", "/control/reset")
        #expect(reset.status == 200)
        #expect(f.server.faults.json == FaultPlan().json)
        #expect(f.server.engine.settings.heartbeatTimeoutMilliseconds == 30_000)
        let bob = try f.loggedIn("bob", device: "b")
        #expect(!bob.isClosed)
        #expect(f.server.trace.entries.last { $0.kind == .control }?.text == "reset")
    }
}
