/// Wall time since it was made, on ``MonotonicTime``: how long a run, a scenario or a
/// shrink took.
public struct Stopwatch: Sendable {
    /// The reading when the stopwatch was made.
    public let start: UInt64

    public init() { start = MonotonicTime.now() }

    /// Seconds since the start.
    public var elapsedSeconds: Double { MonotonicTime.seconds(from: start, to: MonotonicTime.now()) }
}
