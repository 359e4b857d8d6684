/// The arithmetic of the reports, kept apart so that it can be tested on its own.
public enum BenchMath {
    /// Events per second; 0 for an empty interval.
    public static func rate(_ count: Int, seconds: Double) -> Double {
        seconds > 0 ? Double(count) / seconds : 0
    }

    /// Microseconds of CPU per message; nil when nothing was measured.
    public static func microsecondsPerMessage(cpuSeconds: Double?, messages: Int) -> Double? {
        guard let cpuSeconds, messages > 0 else { return nil }
        return cpuSeconds * 1e6 / Double(messages)
    }

    /// Bytes of resident memory added per connection.
    public static func bytesPerConnection(before: Int?, after: Int?, connections: Int) -> Double? {
        guard let before, let after, connections > 0 else { return nil }
        return Double(after - before) / Double(connections)
    }

    /// `value / reference`, nil when the reference is missing or zero.
    public static func ratio(_ value: Double?, to reference: Double?) -> Double? {
        guard let value, let reference, reference != 0 else { return nil }
        return value / reference
    }

    /// `value` rounded to `places` decimals (for stable, readable JSON).
    public static func rounded(_ value: Double, places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (value * scale).rounded() / scale
    }

    /// The median of some numbers; nil when there are none.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
