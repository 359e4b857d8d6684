/// What the device around the SDK does on its own: name resolution failing, sleeping,
/// throttling the SDK's timers, and the OS's notice that the network path changed
/// (docs/DRIVER.md, "Device events"). The driver carries out the first three (its
/// resolver and its clock); the SDK hears only the last.
public enum DeviceEvent: Sendable, Equatable {
    /// The next `attempts` connection attempts fail at name resolution with `kind`'s
    /// error; `nil` fails every attempt until a `dnsFailure(attempts: 0)` clears it.
    case dnsFailure(attempts: Int?, kind: DNSFailureKind = .notFound)
    /// The device sleeps this long: no SDK timer fires while the server's clock runs;
    /// on wake the overdue ones fire at once, in deadline order.
    case sleep(milliseconds: Int64)
    /// The SDK's timers fire only on the ticks of this period, counted from now (a hidden
    /// browser tab); `0` ends the throttling.
    case throttle(periodMilliseconds: Int64)
    /// The OS reports a network path change (an interface change); the network stays up.
    case networkChange

    /// Which resolver error a `dns` event gives: each platform reports it as its own
    /// (POSIX `EAI_NONAME` / `EAI_AGAIN`, Node `ENOTFOUND` / `EAI_AGAIN`).
    public enum DNSFailureKind: String, Sendable, Equatable, CaseIterable {
        /// The name does not exist (the default).
        case notFound
        /// The resolver failed for now; the same name may resolve later.
        case temporary
    }

    /// The longest `sleep`: a day.
    public static let maxSleepMilliseconds: Int64 = 86_400_000
    /// The longest `throttle` period: an hour.
    public static let maxThrottleMilliseconds: Int64 = 3_600_000
}
