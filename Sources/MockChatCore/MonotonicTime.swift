#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds on the monotonic clock: what every latency, duration and wall-time
/// deadline of real work is measured with (never virtual time, which is ``Instant``).
///
/// The loop's clock has millisecond timers, which is enough to pace sends; latencies
/// need finer resolution and must not jump when the wall clock does.
public enum MonotonicTime {
    /// Nanoseconds since an arbitrary fixed point (boot).
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// The reading `seconds` from now, for a deadline.
    public static func after(seconds: Double) -> UInt64 { now() &+ UInt64(max(0, seconds) * 1e9) }

    /// Seconds between two readings.
    public static func seconds(from start: UInt64, to end: UInt64) -> Double {
        end > start ? Double(end - start) / 1e9 : 0
    }
}
