import ChatProtocol
import MockChatTestSupport
import Testing

/// `GET /control/connections` and `GET /control/presence` with `uid`, `connection` and
/// `limit` (docs/PROTOCOL.md, 12.5 and 12.6): the console reads no more than it draws.
@Suite struct StateViewTests {
    /// Alice on one device and Bob on three, all logged in, plus one connection not yet logged in.
    private func fourDevicesAndAStranger() throws -> ServerFixture {
        let f = try ServerFixture()
        _ = try f.loggedIn("alice", device: "alice-laptop", platform: .desktop)
        _ = try f.loggedIn("bob", device: "bob-desktop", platform: .desktop)
        _ = try f.loggedIn("bob", device: "bob-web", platform: .web)
        _ = try f.loggedIn("bob", device: "bob-phone", platform: .mobile)
        _ = try f.connect()
        return f
    }

    private func ids(_ list: JSONValue?, _ key: String = "id") -> [String] {
        (list?.arrayValue ?? []).compactMap { $0[key]?.stringValue }
    }

    @Test func withoutAQueryEverythingIsListedAndNothingCounted() throws {
        let f = try fourDevicesAndAStranger()
        let connections = try #require(try f.control("GET", "/control/connections").json)
        #expect(ids(connections["connections"]) == ["c1", "c2", "c3", "c4", "c5"])
        #expect(connections["matching"] == nil && connections["total"] == nil)
        let presence = try #require(try f.control("GET", "/control/presence").json)
        #expect(presence["online"] == ["alice", "bob"])
        #expect(ids(presence["devices"]?["bob"], "deviceId") == ["bob-desktop", "bob-web", "bob-phone"])
        #expect(ids(presence["subscriptions"], "connection") == ["c1", "c2", "c3", "c4"])
        #expect(presence["onlineMatching"] == nil && presence["deviceCounts"] == nil)
    }

    @Test func aLimitListsTheFirstEntriesOfEachListAndCountsThemAll() throws {
        let f = try fourDevicesAndAStranger()
        let connections = try #require(try f.control("GET", "/control/connections?limit=2").json)
        #expect(ids(connections["connections"]) == ["c1", "c2"])
        #expect(connections["matching"] == 5 && connections["total"] == 5)
        let presence = try #require(try f.control("GET", "/control/presence?limit=2").json)
        #expect(presence["online"] == ["alice", "bob"])
        #expect(ids(presence["devices"]?["bob"], "deviceId") == ["bob-desktop", "bob-web"])
        #expect(presence["deviceCounts"] == ["alice": 1, "bob": 3])
        #expect(ids(presence["subscriptions"], "connection") == ["c1", "c2"])
        // With a limit, who each listed connection watches is worked out for it alone.
        #expect(presence["subscriptions"]?.arrayValue?.map { $0["watching"] } == [["bob"], ["alice"]])
        #expect(presence["onlineMatching"] == 2 && presence["subscriptionsMatching"] == 4)
    }

    @Test func uidAndConnectionPickTheEntries() throws {
        let f = try fourDevicesAndAStranger()
        let bob = try #require(try f.control("GET", "/control/connections?uid=bob").json)
        #expect(ids(bob["connections"]) == ["c2", "c3", "c4"])
        #expect(bob["matching"] == 3 && bob["total"] == 5)
        let one = try #require(try f.control("GET", "/control/presence?connection=c3").json)
        // The users online are picked by uid only; the subscriptions by both.
        #expect(one["online"] == ["alice", "bob"])
        #expect(ids(one["subscriptions"], "connection") == ["c3"])
        #expect(one["subscriptionsMatching"] == 1)
        let nobody = try #require(try f.control("GET", "/control/presence?uid=mallory").json)
        #expect(nobody["online"] == [] && nobody["devices"] == [:] && nobody["subscriptions"] == [])
        #expect(nobody["onlineMatching"] == 0)
    }

    @Test func aBadQueryIsRefusedWithWhatWasWrongAndTheServerServesOn() throws {
        let f = try fourDevicesAndAStranger()
        for (query, message) in [
            ("limit=0", "'limit' must be an integer from 1 to 1000000, not '0'"),
            ("limit=ten", "'limit' must be an integer from 1 to 1000000, not 'ten'"),
            ("limit=1000001", "'limit' must be an integer from 1 to 1000000, not '1000001'"),
            ("user=bob", "unknown query parameter 'user'; this route takes uid, connection and limit"),
        ] {
            for route in ["/control/connections", "/control/presence"] {
                let reply = try f.control("GET", route + "?" + query)
                #expect(reply.status == 400, "\(route)?\(query)")
                #expect(reply.json?["error"]?.stringValue == message, "\(route)?\(query)")
            }
        }
        #expect(try f.control("GET", "/control/presence").json?["online"] == ["alice", "bob"])
    }
}
