import Dispatch

extension DispatchTime {
    /// Seconds from this time until now.
    var elapsedSeconds: Double {
        Double(DispatchTime.now().uptimeNanoseconds - uptimeNanoseconds) / 1e9
    }
}
