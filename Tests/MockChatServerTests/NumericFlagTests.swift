import Foundation
import Testing

/// The numeric flags of `test`, `matrix`, `fuzz`, `scenarios shrink` and `bench` pass
/// `BoundedNumber` in the command's `validate()`: out of range, NaN or infinite is a usage
/// error naming the flag (exit 64), before anything converts the number (issue 26, item 3).
@Suite("numeric flags")
struct NumericFlagTests {
    @Test(arguments: [
        // Before: a trap (exit 132) when the first deadline was computed (Double to UInt64).
        (["test", "Fixtures/scenarios/connection", "--driver-timeout", "1e308"],
         "--driver-timeout must be a number from 0.001 to 86400 seconds, not 1e+308"),
        (["test", "Fixtures/scenarios/connection", "--driver-timeout", "inf"], "--driver-timeout must be a number"),
        (["test", "Fixtures/scenarios/connection", "--driver-timeout", "nan"], "not nan"),
        (["matrix", "--driver-timeout=-1"], "--driver-timeout must be a number from 0.001 to 86400 seconds, not -1"),
        (["scenarios", "shrink", "x.jsonl", "--expect", "{}", "--budget", "1e308"],
         "--budget must be a number from 0.001 to 86400 seconds, not 1e+308"),
        (["fuzz", "--seconds", "nan"], "--seconds must be a number from 0.001 to 31622400 seconds, not nan"),
        (["fuzz", "--jobs", "100000"], "--jobs must be an integer from 1 to 64 workers, not 100000"),
        (["fuzz", "--history-length", "0"], "--history-length must be an integer from 1 to 100000"),
        // Before: a trap (a precondition, or Double to UInt64) once the run began.
        (["bench", "ping", "--connections", "0"], "--connections must be an integer from 1 to 1000000 connections, not 0"),
        (["bench", "ping", "--duration", "1e308"], "--duration must be a number from 0.001 to 86400 seconds, not 1e+308"),
        (["bench", "ping", "--warmup=-inf"], "--warmup must be a number from 0 to 86400 seconds, not -inf"),
        (["bench", "ping", "--rate", "nan"], "--rate must be a number"),
        (["bench", "idle", "--keepalive", "1e300"], "--keepalive must be a number from 1 to 86400 seconds"),
        (["bench", "idle", "--hold", "nan"], "--hold must be a number"),
        (["bench", "presence", "--churn", "0"], "--churn must be a number from 0.001 to 10000000 transitions per second, not 0"),
        (["bench", "presence", "--duration", "inf"], "--duration must be a number"),
        (["bench", "reconnect", "--users", "0"], "--users must be an integer from 1 to 1000000 users, not 0"),
    ])
    func aNumberOutOfRangeIsAUsageErrorNamingTheFlag(arguments: [String], message: String) throws {
        let (status, stderr) = try ServeCommandTests().run(arguments)
        #expect(status == 64, "\(arguments): \(stderr)")
        #expect(stderr.contains(message), "\(stderr)")
    }
}
