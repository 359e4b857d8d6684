@testable import ConformanceHarness
import ChatProtocol
import EventLoop
import MockChatCore
import MockChatServer
import Testing

/// What the harness reads from others (a driver's instants, a server's trace lines) is
/// checked before it is converted, and a start that fails releases its loop (issue 26, item 3).
@Suite struct HarnessInputTests {
    /// A driver's `now`, `nextDeadline` or event `at` outside 0 to 9999-12-31 is an error
    /// naming the field; before, Int64.min reached the clock's arithmetic (an overflow trap).
    @Test(arguments: [Int64.min, -1, Int64(BoundedNumber.latestSeconds) * 1000 + 1, Int64.max])
    func aDriverInstantOutOfRangeIsAnError(milliseconds: Int64) {
        #expect(throws: ScenarioError.self) { try DriverLink.instant(milliseconds, "state.nextDeadline") }
        do {
            _ = try DriverLink.instant(milliseconds, "state.nextDeadline")
        } catch {
            #expect(error.message.hasPrefix("the driver's state.nextDeadline must be an integer from 0 to 253402300799000"))
        }
        #expect((try? DriverLink.instant(1_700_000_000_000, "state.now"))?.milliseconds == 1_700_000_000_000)
    }

    /// A trace line of a server under test (`mockchat test --server`) or of a recording
    /// with `t` of 1e308 is refused naming the field; before, a trap (Double to Int64).
    @Test(arguments: [1e308, -1e308, 1e17, -1.0])
    func aTraceEntryTimeOutOfRangeIsAnError(seconds: Double) {
        let line: JSONValue = ["seq": 1, "t": .double(seconds), "kind": "open", "conn": "c1"]
        do {
            _ = try TraceLog.Entry(json: line)
            Issue.record("accepted t = \(seconds)")
        } catch {
            #expect(error.description.contains("a trace entry's 't' must be a number from 0 to 253402300799 seconds"), "\(error)")
        }
        #expect((try? TraceLog.Entry(json: ["seq": 1, "t": 1_700_000_000.5, "kind": "open", "conn": "c1"]))?.time.milliseconds
                == 1_700_000_000_500)
    }

    /// Listening for drivers on a port in use fails with the reason, and the bridge's loop
    /// is shut down before the caller hears of it (before: released open, a precondition
    /// trap on the bridge's thread as soon as it returned).
    @Test func aDriverListenerOnAPortInUseFailsAndReleasesItsLoop() throws {
        let first = try DriverListener(address: SocketAddress(host: "127.0.0.1", port: 0))
        for _ in 0..<20 {
            let error = #expect(throws: ScenarioError.self) { try DriverListener(address: first.address) }
            #expect(error?.message.hasPrefix("cannot listen for drivers on \(first.address): ") == true)
        }
        // Twenty failed starts left no loop behind that keeps a new listener from starting.
        _ = try DriverListener(address: SocketAddress(host: "127.0.0.1", port: 0))
    }
}
