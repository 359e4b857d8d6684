import MockChatServer
import Testing

@Suite struct FixtureGeneratorTests {
    @Test func generatedUsersLoadAsADirectoryOfPlainUsers() throws {
        let fixtures = try FixtureSet(usersJSON: FixtureGenerator.usersJSON(count: 2_500), appJSON: FixtureGenerator.appJSON)
        #expect(fixtures.directory.records.count == 2_500)
        for index in [0, 1, 1_234, 2_499] {
            let record = try #require(fixtures.directory.record(FixtureGenerator.uid(index)))
            #expect(record.name == "User \(index)")
            #expect(record.friends.isEmpty && record.blocked.isEmpty)
        }
        #expect(fixtures.directory.record(FixtureGenerator.uid(2_500)) == nil)
        #expect(fixtures.settings == (try FixtureSet.embedded()).settings)
    }

    @Test func theUidsOfOneGeneratedSetAreAllDistinct() {
        #expect(Set((0..<10_000).map(FixtureGenerator.uid)).count == 10_000)
        #expect(FixtureGenerator.uid(7) == "user-7")
    }
}
