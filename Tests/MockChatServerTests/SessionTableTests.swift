import ChatProtocol
@testable import MockChatServer
import Testing

/// The session table's invariants (its doc comment): ids given out once, labels from login
/// to end, claims for the trace only, and per-address pending counts that drop to no entry.
@Suite("SessionTable")
struct SessionTableTests {
    @Test func idsCountUpFromOneAndAreNeverReused() {
        var table = SessionTable()
        let first = table.open(pendingFrom: "10.0.0.1")
        #expect(first == ConnectionID(1))
        _ = table.end(first)
        #expect(table.open() == ConnectionID(2))
    }

    @Test func aSessionCountsAgainstItsAddressUntilItLogsInOrEnds() {
        var table = SessionTable()
        let a = table.open(pendingFrom: "h")
        let b = table.open(pendingFrom: "h")
        let stalled = table.open()
        #expect(table.pendingCount(from: "h") == 2)
        table.logIn(a, as: ("alice", "phone"))
        #expect(table.pendingCount(from: "h") == 1)
        _ = table.end(b)
        _ = table.end(stalled)
        #expect(table.pendingCount(from: "h") == 0)
        // Settling twice (a close after a login) does not count below zero.
        table.settlePending(a)
        #expect(table.pendingCount(from: "h") == 0)
    }

    @Test func aClaimIsTracedButNotMatchedAndEndsWithTheSession() {
        var table = SessionTable()
        let id = table.open(pendingFrom: "h")
        table.claim(id, ("bob", "tablet"))
        #expect(table.label(id) == nil)
        #expect(table.tracedLabel(id)?.uid == "bob")
        table.logIn(id, as: ("bob", "tablet-2"))
        #expect(table.label(id)?.deviceId == "tablet-2")
        #expect(table.tracedLabel(id)?.deviceId == "tablet-2")
        #expect(table.end(id)?.deviceId == "tablet-2")
        #expect(table.tracedLabel(id) == nil)
        #expect(table.end(id) == nil)
    }
}
