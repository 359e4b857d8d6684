/// The delays between automatic reconnection attempts: a fixed list, then one
/// interval repeated for as long as the loop runs.
public struct ReconnectBackoff: Codable, Sendable, Equatable {
    /// Seconds before the first, second, ... attempt after a loss.
    public var steps: [Double]
    /// Seconds between attempts once `steps` is used up.
    public var repeatEvery: Double

    public init(steps: [Double], repeatEvery: Double) {
        self.steps = steps
        self.repeatEvery = repeatEvery
    }

    /// Milliseconds to wait before the attempt that follows `failures` failed ones
    /// (0 for the first attempt after a loss).
    public func delayMilliseconds(afterFailures failures: Int) -> Int64 {
        let seconds = failures >= 0 && failures < steps.count ? steps[failures] : repeatEvery
        return Profile.milliseconds(seconds)
    }
}
