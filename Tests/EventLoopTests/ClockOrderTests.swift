import Testing
@testable import EventLoop

/// Timers due at one instant fire in the order they were scheduled, except that `late`
/// ones wait for every other timer of that instant (docs/DRIVER.md, "One timeline").
@Suite struct ClockOrderTests {
    @Test func lateTimersFireAfterTheOthersOfTheirInstant() throws {
        let loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
        defer { loop.shutdown() }
        var fired: [String] = []
        loop.clock.schedule(after: 30_000, late: true) { fired.append("sdk task") }
        loop.clock.schedule(after: 30_000) { fired.append("server timeout") }
        loop.clock.schedule(after: 29_999, late: true) { fired.append("sdk earlier") }
        loop.clock.schedule(after: 30_000) { fired.append("server second") }
        loop.clock.advance(to: loop.clock.now.advanced(by: 30_000))
        #expect(fired == ["sdk earlier", "server timeout", "server second", "sdk task"])
    }
}
