@testable import LoadGenerator
import Testing

@Suite struct ReconnectCountTests {
    @Test func everyLaterLoginHeardOnceIsExact() {
        #expect(ReconnectBench.deliveredExactly(counts: [2, 0, 3, 1], logins: 4))
        #expect(ReconnectBench.deliveredExactly(counts: [0, 1, 0], logins: 2))  // one never logged in
        #expect(ReconnectBench.deliveredExactly(counts: [], logins: 0))
    }

    @Test func aLostDuplicatedOrMisplacedEventIsNotExact() {
        #expect(!ReconnectBench.deliveredExactly(counts: [2, 0, 2, 1], logins: 4))  // one lost
        #expect(!ReconnectBench.deliveredExactly(counts: [2, 0, 4, 1], logins: 4))  // one duplicated
        #expect(!ReconnectBench.deliveredExactly(counts: [1, 1, 0], logins: 2))  // to a connection not logged in
        #expect(!ReconnectBench.deliveredExactly(counts: [0], logins: 2))
    }
}
