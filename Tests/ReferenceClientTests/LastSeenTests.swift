import EventLoop
import Testing
@testable import ReferenceClient

/// 004 "Calculating Last Seen".
@Suite struct LastSeenTests {
    static let now = Instant(seconds: 1_772_110_483)

    @Test(arguments: [
        (300.0, "Last seen 5 minute(s) ago"),
        (3_600, "Last seen 1 hour(s) ago"),
        (86_400, "Last seen 1 day(s) ago"),
        (172_800, "Last seen 2 day(s) ago"),
    ])
    func documentedExamples(elapsed: Double, text: String) {
        #expect(SDKStateMachine.lastSeenText(now: Self.now, lastActiveAt: Self.now.seconds - elapsed) == text)
    }

    @Test(arguments: [
        (0.0, "Last seen just now"),
        (59.9, "Last seen just now"),
        (60, "Last seen 1 minute(s) ago"),
        (3_599, "Last seen 59 minute(s) ago"),
        (7_199, "Last seen 1 hour(s) ago"),
        (86_399, "Last seen 23 hour(s) ago"),
        (-120, "Last seen just now"),
        // Trapped (Double to Int) before the bound: times from the server taken as they come.
        (1e308, "Last seen 2932896 day(s) ago"),
        (-1e308, "Last seen just now"),
    ])
    func boundaries(elapsed: Double, text: String) {
        #expect(SDKStateMachine.lastSeenText(now: Self.now, lastActiveAt: Self.now.seconds - elapsed) == text)
    }
}
