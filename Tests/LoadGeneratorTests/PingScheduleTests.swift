import LoadGenerator
import Testing

@Suite("PingSchedule")
struct PingScheduleTests {
    let schedule = PingSchedule(rate: 1_000, connections: 4, start: 1_000_000_000)

    @Test("pings are evenly spaced over the whole run")
    func spacing() {
        #expect(schedule.intendedTime(ofPing: 0) == 1_000_000_000)
        #expect(schedule.intendedTime(ofPing: 1) == 1_001_000_000)
        #expect(schedule.intendedTime(ofPing: 1_000) == 2_000_000_000)
    }

    @Test("connections take pings in turn, each at rate / connections")
    func roundRobin() {
        #expect((0..<8).map(schedule.connection(ofPing:)) == [0, 1, 2, 3, 0, 1, 2, 3])
        #expect((0..<8).map(schedule.sequence(ofPing:)) == [0, 0, 0, 0, 1, 1, 1, 1])
        // Connection 2's consecutive pings are 4 ms apart: 250 pings/s each.
        let first = schedule.intendedTime(connection: 2, sequence: 0)
        let second = schedule.intendedTime(connection: 2, sequence: 1)
        #expect(second - first == 4_000_000)
    }

    @Test("a reply's connection and sequence give back its intended time")
    func inverse() {
        for ping in [0, 1, 5, 17, 999, 123_457] {
            let connection = schedule.connection(ofPing: ping)
            let sequence = schedule.sequence(ofPing: ping)
            #expect(schedule.ping(connection: connection, sequence: sequence) == ping)
            #expect(schedule.intendedTime(connection: connection, sequence: sequence) == schedule.intendedTime(ofPing: ping))
        }
    }

    @Test("due count includes a ping exactly at its time, and none before the start")
    func dueCount() {
        #expect(schedule.dueCount(at: 0) == 0)
        #expect(schedule.dueCount(at: 999_999_999) == 0)
        #expect(schedule.dueCount(at: 1_000_000_000) == 1)
        #expect(schedule.dueCount(at: 1_000_999_999) == 1)
        #expect(schedule.dueCount(at: 1_001_000_000) == 2)
        #expect(schedule.dueCount(at: 2_000_000_000) == 1_001)
    }

    @Test("a stalled sender still owes every ping whose time has passed")
    func stall() {
        // Nothing sent for 50 ms: 50 pings are due at once, and each keeps its own
        // intended time, so their latency includes the stall.
        let due = schedule.dueCount(at: 1_049_500_000)
        #expect(due == 50)
        #expect(schedule.intendedTime(ofPing: due - 1) == 1_049_000_000)
    }

    @Test("the measured window starts at the first ping due at or after its start")
    func firstPing() {
        #expect(schedule.firstPing(notBefore: 0) == 0)
        #expect(schedule.firstPing(notBefore: 1_000_000_000) == 0)
        #expect(schedule.firstPing(notBefore: 1_000_000_001) == 1)
        #expect(schedule.firstPing(notBefore: 1_002_000_000) == 2)
    }

    @Test("fractional spacing does not drift")
    func fractionalRate() {
        let odd = PingSchedule(rate: 3, connections: 1, start: 0)
        #expect(odd.intendedTime(ofPing: 3) == 1_000_000_000)
        #expect(odd.intendedTime(ofPing: 3_000) == 1_000_000_000_000)
        #expect(odd.dueCount(at: 1_000_000_000) == 4)
    }
}
