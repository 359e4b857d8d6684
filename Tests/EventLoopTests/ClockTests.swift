import Testing
@testable import EventLoop

/// System-clock timers keep their delays when the wall clock steps.
@Suite struct ClockTests {
    /// A wall clock the test can step.
    final class SteppedWall {
        var offset: Int64 = 0
        let real: () -> Instant
        init(_ clock: Clock) { real = clock.wallClock }
        var now: Instant { real().advanced(by: offset) }
    }

    @Test func aForwardStepOfTheWallClockFiresNoTimerEarly() throws {
        let loop = try EventLoop()
        let wall = SteppedWall(loop.clock)
        loop.clock.wallClock = { wall.now }
        var fired: [String] = []
        loop.clock.schedule(after: 30) { fired.append("soon") }
        loop.clock.schedule(at: loop.clock.now.advanced(by: 30_000)) { fired.append("in 30 s") }
        wall.offset = 3_600_000
        #expect(loop.run(timeout: 5) { fired.contains("soon") })
        #expect(fired == ["soon"])
        #expect(loop.clock.pendingTimers == 1)
        let left = loop.clock.nextDeadline.map { $0.milliseconds - loop.clock.now.milliseconds }
        #expect(left.map { (29_000...30_000).contains($0) } == true, "\(String(describing: left)) ms left")
        #expect(loop.shutdown() == 0)
    }

    @Test func aBackwardStepOfTheWallClockHoldsNoTimerBack() throws {
        let loop = try EventLoop()
        let wall = SteppedWall(loop.clock)
        loop.clock.wallClock = { wall.now }
        var fired = false
        loop.clock.schedule(at: loop.clock.now.advanced(by: 30)) { fired = true }
        wall.offset = -3_600_000
        #expect(loop.run(timeout: 5) { fired })
        #expect(loop.shutdown() == 0)
    }
}
