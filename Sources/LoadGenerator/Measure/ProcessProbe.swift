import Foundation

/// Reads another process's resident memory and CPU time from `/proc`.
///
/// Used on the server under test: the benchmark compares CPU time per message and
/// memory per connection, which are less sensitive to a noisy shared machine than
/// wall-clock throughput.
public struct ProcessProbe: Sendable {
    public let pid: Int32

    public init(pid: Int32) { self.pid = pid }

    /// The probe of this very process.
    public static var current: ProcessProbe { ProcessProbe(pid: getpid()) }

    /// Resident set size in bytes (`VmRSS`).
    public func residentBytes() -> Int? {
        guard let status = Self.read("/proc/\(pid)/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let kilobytes = Int(fields[1]) else { return nil }
            return kilobytes * 1024
        }
        return nil
    }

    /// User plus system CPU time in seconds, all threads (`utime + stime`).
    public func cpuSeconds() -> Double? {
        guard let stat = Self.read("/proc/\(pid)/stat") else { return nil }
        return Self.cpuSeconds(fromStat: stat, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// Write system calls made and bytes written so far (`syscw`, `wchar` of
    /// `/proc/PID/io`; sockets included).
    public func writes() -> WriteCounts? {
        guard let io = Self.read("/proc/\(pid)/io") else { return nil }
        var calls: Int?
        var bytes: Int?
        for line in io.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2 else { continue }
            if fields[0] == "syscw:" { calls = Int(fields[1]) }
            if fields[0] == "wchar:" { bytes = Int(fields[1]) }
        }
        guard let calls, let bytes else { return nil }
        return WriteCounts(calls: calls, bytes: bytes)
    }

    /// Open file descriptors.
    public func openFileCount() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }

    /// The soft and hard `RLIMIT_NOFILE` of the process, from `/proc/PID/limits`.
    public func openFileLimits() -> (soft: Int, hard: Int)? {
        guard let limits = Self.read("/proc/\(pid)/limits") else { return nil }
        for line in limits.split(separator: "\n") where line.hasPrefix("Max open files") {
            let numbers = line.split(separator: " ").compactMap { Int($0) }
            guard numbers.count >= 2 else { return nil }
            return (numbers[0], numbers[1])
        }
        return nil
    }

    /// CPU seconds from the text of `/proc/PID/stat` (fields 14 and 15, counted after
    /// the parenthesised command name, which may itself contain spaces).
    public static func cpuSeconds(fromStat stat: String, ticksPerSecond: Double) -> Double? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After ")": state is field 3, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Write system calls and bytes written, so that several readings add up and subtract.
public struct WriteCounts: AdditiveArithmetic, Sendable {
    public var calls: Int
    public var bytes: Int

    public init(calls: Int, bytes: Int) {
        self.calls = calls
        self.bytes = bytes
    }

    public static let zero = WriteCounts(calls: 0, bytes: 0)

    public static func + (a: WriteCounts, b: WriteCounts) -> WriteCounts {
        WriteCounts(calls: a.calls + b.calls, bytes: a.bytes + b.bytes)
    }

    public static func - (a: WriteCounts, b: WriteCounts) -> WriteCounts {
        WriteCounts(calls: a.calls - b.calls, bytes: a.bytes - b.bytes)
    }
}

extension Array where Element == ProcessProbe {
    /// The sum of `read` over the processes (a cluster's nodes): nil when there are none
    /// or one cannot be read.
    public func total<Value: AdditiveArithmetic>(_ read: (ProcessProbe) -> Value?) -> Value? {
        let values = map(read)
        return values.isEmpty || values.contains(nil) ? nil : values.compactMap { $0 }.reduce(.zero, +)
    }
}
