import MockChatCore

/// When the device lets an SDK timer fire (docs/DRIVER.md, "Device events"). While the
/// device sleeps no timer fires before the wake; while timers are throttled a timer
/// fires on the first tick of the period at or after its deadline. A pure value: the
/// client asks it where each timer goes.
public struct DeviceTimeGate: Sendable, Equatable {
    /// The end of the current sleep, while the device sleeps.
    public private(set) var wake: Instant?
    /// The first tick and the period of the throttling in force.
    public private(set) var throttle: Throttle?

    public struct Throttle: Sendable, Equatable {
        public var origin: Instant
        public var period: Int64
    }

    public init() {}

    /// The device sleeps from `now` for `milliseconds`; a sleep under way is extended.
    public mutating func sleep(now: Instant, milliseconds: Int64) {
        let end = now.advanced(by: milliseconds)
        wake = max(wake ?? end, end)
    }

    /// The device woke.
    public mutating func woke() { wake = nil }

    /// Timers are throttled to `period` from `now` on; `0` ends it.
    public mutating func throttle(now: Instant, period: Int64) {
        throttle = period > 0 ? Throttle(origin: now, period: period) : nil
    }

    /// When a timer due at `deadline` fires.
    public func fireTime(_ deadline: Instant) -> Instant {
        var time = deadline
        if let wake, time < wake { time = wake }
        if let throttle, time > throttle.origin {
            let elapsed = time.milliseconds - throttle.origin.milliseconds
            let ticks = (elapsed + throttle.period - 1) / throttle.period
            time = throttle.origin.advanced(by: ticks * throttle.period)
        }
        return time
    }
}
