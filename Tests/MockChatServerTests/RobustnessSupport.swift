import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

// Helpers shared by the Robustness*Tests files (raw WebSocket connections and requests
// written as text come from MockChatTestSupport): writes that await the close, a bystander that checks other clients are unaffected, and
// probes of the process's memory and descriptors.

/// Every robustness test runs inside this suite, one test at a time: several of them
/// measure process-wide figures (peak memory, descriptors, wall time) that concurrent
/// tests of the same suite would disturb.
@Suite(.serialized) struct Robustness {}

extension ServerFixture {
    /// Writes `bytes` and waits until the server has closed the connection (and the
    /// client side has seen it), or `timeout` seconds of wall time.
    @discardableResult
    func sendAndAwaitClose(_ raw: RawConnection, _ bytes: [UInt8], timeout: Double = 5) -> Bool {
        raw.write(bytes)
        let closed = loop.run(timeout: timeout) { raw.isClosed }
        settle()
        return closed
    }

    /// Replays `bytes` one byte per write, letting the server read each before the next.
    func writeByteByByte(_ raw: RawConnection, _ bytes: [UInt8]) {
        for byte in bytes {
            guard !raw.isClosed else { return }
            raw.write([byte])
            loop.settle()
        }
    }
}

// MARK: Bystanders

/// A client that is connected the whole time a test feeds bad input, and checks that
/// it still gets its pings answered on time and its presence events.
final class Bystander {
    let watcher: TestClient
    private unowned let fixture: ServerFixture
    private var probes = 0

    /// Logs `uid` in on a desktop, subscribed to everybody.
    init(_ fixture: ServerFixture, uid: String = "alice") throws {
        self.fixture = fixture
        watcher = try fixture.loggedIn(uid, device: "bystander-\(uid)", presence: .allUsers)
    }

    /// Presence events about `uid` seen so far, as event names.
    func events(about uid: String) -> [String] {
        watcher.presence.filter { $0.user.uid == uid }.map(\.event)
    }

    /// The watcher's ping is answered within the same settle with the current virtual
    /// time, and a user that logs in and out is announced exactly once each way.
    func expectUnaffected(probe uid: String = "erin", sourceLocation: SourceLocation = #_sourceLocation) {
        let f = fixture
        #expect(!watcher.isClosed, "the bystander was closed: \(String(describing: watcher.closeInfo))",
                sourceLocation: sourceLocation)
        let sentAt = f.now
        let pong = watcher.request("ping", sourceLocation: sourceLocation)
        #expect(pong?.resultObject?["pong"] == true, "no pong: \(String(describing: pong))",
                sourceLocation: sourceLocation)
        #expect(pong?.resultObject?["serverTime"]?.doubleValue == sentAt.seconds, sourceLocation: sourceLocation)
        probes += 1
        let before = events(about: uid).count
        do {
            let probe = try f.loggedIn(uid, device: "probe-\(probes)", presence: .none)
            probe.close()
            f.settle(sourceLocation: sourceLocation)
            #expect(probe.closeInfo?.received == 1000, sourceLocation: sourceLocation)
        } catch {
            Issue.record("the probe \(uid) could not log in: \(error)", sourceLocation: sourceLocation)
        }
        #expect(Array(events(about: uid).dropFirst(before)) == ["user.online", "user.offline"],
                sourceLocation: sourceLocation)
    }
}

// MARK: Process probes

/// Figures about this test process, read from /proc.
enum ProcessProbe {
    /// A field of /proc/self/status in bytes (the file gives kB).
    static func statusBytes(_ field: String) -> Int? {
        guard let text = readProcFile("/proc/self/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let number = line.dropFirst(field.count + 1).split(separator: " ").first.flatMap { Int($0) }
            return number.map { $0 * 1024 }
        }
        return nil
    }

    /// The whole of a /proc file. (Reading by the file's size stops after the first
    /// page: /proc files report a size of 0.)
    static func readProcFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The peak resident set size so far.
    static var peakRSS: Int { statusBytes("VmHWM") ?? 0 }

    /// The resident set size now.
    static var currentRSS: Int { statusBytes("VmRSS") ?? 0 }

    /// Lowers the peak to the current resident size (Linux 4.0 and later), so that a
    /// following measurement sees only what happens after this call. Returns whether
    /// the kernel accepted.
    @discardableResult
    static func resetPeakRSS() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
    }

    /// How much the peak resident size grows while `work` runs. Other tests running at
    /// the same time can only add to the figure, so the smallest of `attempts` runs of
    /// `work` is returned.
    static func peakGrowth(attempts: Int = 3, _ work: () throws -> Void) rethrows -> Int {
        var smallest = Int.max
        for _ in 0..<attempts {
            resetPeakRSS()
            let before = max(peakRSS, currentRSS)
            try work()
            smallest = min(smallest, peakRSS - before)
        }
        return smallest
    }

    /// Open descriptors of the process.
    static var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// Open descriptors of the process that are TCP sockets with `port` at either
    /// end: the listener, the server's accepted sockets and the clients' sockets.
    /// Unlike the plain count, other tests running at the same time do not change it.
    static func socketDescriptors(port: Int) -> Int {
        var inodes = Set<String>()
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let text = readProcFile(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                guard columns.count > 9 else { continue }
                let ports = [columns[1], columns[2]].compactMap { $0.split(separator: ":").last.flatMap { Int($0, radix: 16) } }
                if ports.contains(port), columns[9] != "0" { inodes.insert(String(columns[9])) }
            }
        }
        let folder = "/proc/self/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.filter { entry in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + entry),
                  target.hasPrefix("socket:[") else { return false }
            return inodes.contains(String(target.dropFirst("socket:[".count).dropLast()))
        }.count
    }

    /// Wall-clock seconds spent in `work`.
    static func seconds(_ work: () throws -> Void) rethrows -> Double {
        let stopwatch = Stopwatch()
        try work()
        return stopwatch.elapsedSeconds
    }

    /// CPU seconds this thread spends in `work`: unlike wall time, not stretched while
    /// other processes have the cores.
    static func threadCPUSeconds(_ work: () throws -> Void) rethrows -> Double {
        func now() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        let start = now()
        try work()
        return now() - start
    }
}

/// Prints a measured figure in a form that is easy to find in the test log.
func reportFigure(_ row: Int, _ text: String) {
    print("robustness row \(row): \(text)")
}
