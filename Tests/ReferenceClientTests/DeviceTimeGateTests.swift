import MockChatCore
import Testing
@testable import ReferenceClient

/// Where sleep and throttling put a timer (docs/DRIVER.md, "Device events").
@Suite struct DeviceTimeGateTests {
    let t0 = Instant(milliseconds: 1_700_000_000_000)
    func at(_ seconds: Double) -> Instant { t0.advanced(by: Int64(seconds * 1000)) }

    @Test func withoutEventsATimerFiresAtItsDeadline() {
        #expect(DeviceTimeGate().fireTime(at(7)) == at(7))
    }

    @Test func sleepHoldsWhatFallsDueUntilTheWake() {
        var gate = DeviceTimeGate()
        gate.sleep(now: at(12), milliseconds: 25_000)
        #expect(gate.fireTime(at(20)) == at(37))
        #expect(gate.fireTime(at(30)) == at(37))
        #expect(gate.fireTime(at(40)) == at(40))
        gate.woke()
        #expect(gate.fireTime(at(20)) == at(20))
    }

    @Test func aSecondSleepExtendsTheFirstButNeverShortensIt() {
        var gate = DeviceTimeGate()
        gate.sleep(now: at(0), milliseconds: 60_000)
        gate.sleep(now: at(10), milliseconds: 5_000)
        #expect(gate.wake == at(60))
        gate.sleep(now: at(20), milliseconds: 60_000)
        #expect(gate.wake == at(80))
    }

    @Test func throttlingMovesATimerToTheNextTickOfThePeriod() {
        var gate = DeviceTimeGate()
        gate.throttle(now: at(5), period: 60_000)
        #expect(gate.fireTime(at(15)) == at(65))
        #expect(gate.fireTime(at(65)) == at(65))
        #expect(gate.fireTime(at(65.001)) == at(125))
        gate.throttle(now: at(70), period: 0)
        #expect(gate.throttle == nil)
        #expect(gate.fireTime(at(80)) == at(80))
    }

    @Test func aWakeInsideAThrottledTabWaitsForTheNextTick() {
        var gate = DeviceTimeGate()
        gate.throttle(now: at(0), period: 60_000)
        gate.sleep(now: at(10), milliseconds: 20_000)
        #expect(gate.fireTime(at(15)) == at(60))
    }
}
