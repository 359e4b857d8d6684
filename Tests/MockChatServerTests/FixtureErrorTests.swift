import ChatProtocol
import EventLoop
import MockChatServer
import Testing

/// A bad fixture file is reported with its name, the line and column of a syntax
/// error, and the user it is about.
@Suite("Fixture errors")
struct FixtureErrorTests {
    let app = #"{"authKey": "k"}"#

    func error(users: String) -> String {
        do {
            _ = try FixtureSet(usersJSON: users, appJSON: app, names: ("fx/users.json", "fx/app.json"))
            return ""
        } catch {
            return error.description
        }
    }

    @Test func aSyntaxErrorNamesFileLineAndColumn() {
        #expect(error(users: "{\"users\": [\n  {\"uid\": \"a\",}\n]}").hasPrefix("fx/users.json:2:15: not valid JSON"))
    }

    @Test func aDuplicateUidNamesBothPlaces() {
        let message = error(users: #"{"users": [{"uid": "a"}, {"uid": "b"}, {"uid": "a"}]}"#)
        #expect(message == "fx/users.json: uid 'a' appears twice (users[0] and users[2])")
    }

    @Test func aBadFieldNamesTheUserAndItsPlace() {
        let message = error(users: #"{"users": [{"uid": "a"}, {"uid": "b", "friends": 3}]}"#)
        #expect(message == "fx/users.json: users[1]: user b: 'friends' must be an array of strings")
    }

    @Test func anAppErrorNamesTheAppFile() throws {
        do {
            _ = try FixtureSet(usersJSON: #"{"users": []}"#, appJSON: #"{"heartbeatTimeout": "soon"}"#)
            Issue.record("a bad app.json was accepted")
        } catch {
            #expect(error.description.hasPrefix("app.json: 'heartbeatTimeout'"))
        }
    }

    @Test func aUserWithoutLastActiveAtWasLastActiveWhenLoaded() throws {
        let fixtures = try FixtureSet(usersJSON: #"{"users": [{"uid": "a"}, {"uid": "b", "lastActiveAt": 5}]}"#, appJSON: app)
        let loadedAt = Instant(seconds: 1_700_000_000)
        var engine = PresenceEngine(directory: fixtures.directory, settings: fixtures.settings, now: loadedAt)
        #expect(engine.user("a", viewer: nil)?.lastActiveAt == loadedAt.seconds)
        #expect(engine.user("b", viewer: nil)?.lastActiveAt == 5)
        _ = engine.load(directory: fixtures.directory, settings: fixtures.settings, closing: .closedByControl,
                        now: loadedAt.advanced(by: 60_000))
        #expect(engine.user("a", viewer: nil)?.lastActiveAt == loadedAt.seconds + 60)
    }
}
