/// A point in time: milliseconds since the Unix epoch.
///
/// Whole milliseconds keep virtual time exact, so the same scenario always yields the
/// same timestamps.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// The instant `seconds` after the epoch, rounded to the millisecond.
    public init(seconds: Double) { milliseconds = Int64((seconds * 1000).rounded()) }

    /// Seconds since the epoch, as carried in `lastActiveAt` and `serverTime`.
    public var seconds: Double { Double(milliseconds) / 1000 }

    public static func < (a: Instant, b: Instant) -> Bool { a.milliseconds < b.milliseconds }

    /// This instant moved by a duration in milliseconds.
    public func advanced(by milliseconds: Int64) -> Instant {
        Instant(milliseconds: self.milliseconds + milliseconds)
    }

    /// The virtual clock's default start: 2023-11-14T22:13:20Z.
    public static let virtualEpoch = Instant(milliseconds: 1_700_000_000_000)

    /// Seconds with three decimals, e.g. `1700000030.250`.
    public var description: String {
        let whole = milliseconds / 1000, fraction = milliseconds % 1000
        let padded = String(fraction)
        return "\(whole)." + String(repeating: "0", count: 3 - padded.count) + padded
    }
}
