/// When each ping of an open-loop run is meant to be sent.
///
/// The run sends `rate` pings per second in total, spread evenly over `connections`
/// connections: ping number `g` (counting from 0 over the whole run) is due at
/// `start + g / rate` and goes to connection `g % connections` as that connection's
/// ping number `g / connections`. Every connection therefore pings at `rate /
/// connections` per second, and neighbouring connections are offset by `1 / rate`, so
/// the load is smooth rather than arriving in bursts of `connections` pings.
///
/// Latency is measured from the intended time, not from when the ping actually left:
/// if the generator or the server stalls, the pings that should have been sent during
/// the stall still count their full wait (no coordinated omission). The mapping is
/// invertible, so a reply's id is all that is needed to find its intended time.
public struct PingSchedule: Sendable, Equatable {
    /// Total pings per second over all connections.
    public let rate: Double
    public let connections: Int
    /// Monotonic nanoseconds of ping 0.
    public let start: UInt64

    public init(rate: Double, connections: Int, start: UInt64) {
        precondition(rate > 0 && connections > 0, "a schedule needs a positive rate and at least one connection")
        self.rate = rate
        self.connections = connections
        self.start = start
    }

    /// Nanoseconds between two consecutive pings of the whole run.
    public var spacing: Double { 1e9 / rate }

    /// When ping `index` of the run is due.
    public func intendedTime(ofPing index: Int) -> UInt64 {
        start &+ UInt64((Double(index) * spacing).rounded())
    }

    /// The connection that sends ping `index` of the run.
    public func connection(ofPing index: Int) -> Int { index % connections }

    /// The connection's own ping number for ping `index` of the run.
    public func sequence(ofPing index: Int) -> Int { index / connections }

    /// The run's ping number of a connection's ping `sequence`.
    public func ping(connection: Int, sequence: Int) -> Int { sequence * connections + connection }

    /// When a connection's ping `sequence` is due.
    public func intendedTime(connection: Int, sequence: Int) -> UInt64 {
        intendedTime(ofPing: ping(connection: connection, sequence: sequence))
    }

    /// How many pings are due at `time` (pings `0..<count` have intended times ≤ `time`).
    public func dueCount(at time: UInt64) -> Int {
        guard time >= start else { return 0 }
        let elapsed = Double(time - start)
        var count = Int((elapsed / spacing).rounded(.down)) + 1
        // Guard against rounding at exact boundaries.
        while count > 0, intendedTime(ofPing: count - 1) > time { count -= 1 }
        while intendedTime(ofPing: count) <= time { count += 1 }
        return count
    }

    /// The first ping whose intended time is at or after `time`.
    public func firstPing(notBefore time: UInt64) -> Int {
        guard time > start else { return 0 }
        return dueCount(at: time - 1)
    }
}
