import MockChatCore

/// The open-file limit of this process.
///
/// Every connection costs a file descriptor, on the server and in the generator, so
/// both raise their soft limit to the hard one at start-up; the hard limit is the real
/// ceiling on connections per process.
enum FileDescriptorLimit {
    /// The current soft and hard limits.
    static var current: (soft: Int, hard: Int) {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return (Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
    }

    /// Raises the soft limit to the hard one; returns the limit now in force.
    @discardableResult
    static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return current.soft }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return current.soft
    }
}
