import Foundation
import Testing
@testable import EventLoop

/// A `LoopWaker` wakes a waiting loop from another thread, and does nothing once closed.
@Suite struct LoopWaitTests {
    @Test func wakerWakesTheLoopFromAnotherThread() throws {
        let loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
        defer { loop.shutdown() }
        var woken = 0
        let waker = LoopWaker(loop: loop) { woken += 1 }
        Thread.detachNewThread { waker.wake() }
        #expect(loop.run(timeout: 5) { woken > 0 })
        waker.close()
        waker.wake()
    }
}
