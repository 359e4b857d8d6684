import ChatProtocol
import Histogram

/// Latency percentiles of one run, in microseconds.
public struct LatencySummary: Sendable, Equatable {
    public var count: UInt64
    public var p50: Double
    public var p99: Double
    public var p999: Double
    public var max: Double
    public var mean: Double

    public init(count: UInt64, p50: Double, p99: Double, p999: Double, max: Double, mean: Double) {
        self.count = count
        self.p50 = p50
        self.p99 = p99
        self.p999 = p999
        self.max = max
        self.mean = mean
    }

    /// Reads a histogram of microsecond values.
    public init(_ histogram: Histogram<UInt64>) {
        guard histogram.totalCount > 0 else {
            self.init(count: 0, p50: 0, p99: 0, p999: 0, max: 0, mean: 0)
            return
        }
        self.init(count: histogram.totalCount,
                  p50: Double(histogram.valueAtPercentile(50)),
                  p99: Double(histogram.valueAtPercentile(99)),
                  p999: Double(histogram.valueAtPercentile(99.9)),
                  max: Double(histogram.max),
                  mean: histogram.mean)
    }

    public var json: JSONValue {
        .object(JSONObject([
            ("count", .integer(Int64(count))), ("p50", .double(p50)), ("p99", .double(p99)),
            ("p999", .double(p999)), ("max", .double(max)), ("mean", .double(BenchMath.rounded(mean, places: 1))),
        ]))
    }
}

/// A histogram of latencies in microseconds, up to one minute.
public struct LatencyRecorder: Sendable {
    public private(set) var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000,
                                                           numberOfSignificantValueDigits: .three)
    public init() {}

    /// Records a latency given in nanoseconds (clamped to the trackable range).
    public mutating func record(nanoseconds: UInt64) {
        let micros = Swift.max(1, Swift.min(nanoseconds / 1000, 60_000_000))
        _ = histogram.record(micros)
    }

    public var summary: LatencySummary { LatencySummary(histogram) }
}
