import MockChatCore

extension SDKStateMachine {
    /// The "last seen" line for a user last active at `lastActiveAt` (Unix seconds),
    /// after 004 "Calculating Last Seen": whole minutes under an hour, whole hours under
    /// a day, whole days beyond (300 s → "Last seen 5 minute(s) ago", 86400 s →
    /// "Last seen 1 day(s) ago"). Project choice: under a minute, and for a time in
    /// the future (clock skew), the text is "Last seen just now" rather than "0 minute(s)".
    public static func lastSeenText(now: Instant, lastActiveAt: Double) -> String {
        // A `lastActiveAt` comes from the server: bounded before the conversion, which
        // traps past Int's range (a time of -1e308 would be 1e308 seconds ago).
        let seconds = min(max(0, now.seconds - lastActiveAt), BoundedNumber.latestSeconds)
        let elapsed = Int(seconds.rounded(.down))
        let minutes = elapsed / 60, hours = minutes / 60, days = hours / 24
        if minutes == 0 { return "Last seen just now" }
        if hours == 0 { return "Last seen \(minutes) minute(s) ago" }
        if days == 0 { return "Last seen \(hours) hour(s) ago" }
        return "Last seen \(days) day(s) ago"
    }
}
