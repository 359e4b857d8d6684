import LoadGenerator
import Testing

@Suite("PresenceLedger")
struct PresenceLedgerTests {
    @Test("every confirmed transition is owed to every subscriber")
    func complete() {
        var ledger = PresenceLedger(subscribers: 3, users: 2)
        ledger.confirm(user: 0, online: true)
        ledger.confirm(user: 1, online: true)
        ledger.confirm(user: 0, online: false)
        for subscriber in 0..<3 {
            ledger.receive(subscriber: subscriber, user: 0, online: true)
            ledger.receive(subscriber: subscriber, user: 1, online: true)
            ledger.receive(subscriber: subscriber, user: 0, online: false)
        }
        #expect(ledger.expected == 9)
        #expect(ledger.received == 9)
        #expect(ledger.lost == 0)
        #expect(ledger.unexpected == 0)
        #expect(ledger.outOfOrder == 0)
    }

    @Test("a missing event is lost even when the totals would hide it")
    func lostHiddenByDuplicate() {
        var ledger = PresenceLedger(subscribers: 2, users: 1)
        ledger.confirm(user: 0, online: true)
        ledger.receive(subscriber: 0, user: 0, online: true)
        ledger.receive(subscriber: 0, user: 0, online: true)
        // Subscriber 1 got nothing; subscriber 0 got a duplicate.
        #expect(ledger.received == ledger.expected)
        #expect(ledger.lost == 1)
        #expect(ledger.unexpected == 1)
        #expect(ledger.outOfOrder == 1)
    }

    @Test("events about users the run does not churn are unexpected")
    func foreign() {
        var ledger = PresenceLedger(subscribers: 1, users: 1)
        ledger.receive(subscriber: 0, user: nil, online: true)
        ledger.receive(subscriber: 0, user: 7, online: false)
        #expect(ledger.foreign == 2)
        #expect(ledger.unexpected == 2)
        #expect(ledger.lost == 0)
    }

    @Test("an offline before its online is out of order")
    func order() {
        var ledger = PresenceLedger(subscribers: 1, users: 1)
        ledger.confirm(user: 0, online: true)
        ledger.confirm(user: 0, online: false)
        ledger.receive(subscriber: 0, user: 0, online: false)
        ledger.receive(subscriber: 0, user: 0, online: false)
        #expect(ledger.outOfOrder == 1)
        #expect(ledger.lost == 1)
    }
}
