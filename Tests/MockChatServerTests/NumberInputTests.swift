import ChatProtocol
import MockChatCore
import MockChatServer
import MockChatTestSupport
import Testing

/// Numbers from input are checked before anything converts them: a number out of range
/// is a 400 naming its field, and the server keeps serving (issue 26, defect 2).
@Suite("numbers from input")
struct NumberInputTests {
    @Test(arguments: [
        ("/control/clock/advance", #"{"seconds":1e308}"#, "'seconds' must be a number from 0 to 31622400 seconds, not 1e+308"),
        ("/control/clock/advance", #"{"seconds":1e16}"#, "'seconds' must be a number from 0 to 31622400 seconds, not 1e+16"),
        ("/control/clock/advance", #"{"seconds":-1e308}"#, "'seconds' must be a number from 0 to 31622400 seconds"),
        ("/control/clock/advance", #"{"seconds":-0.5}"#, "'seconds' must be a number from 0 to 31622400 seconds, not -0.5"),
        ("/control/clock/advance", #"{"ms":9223372036854775807}"#, "'ms' must be an integer from 0 to 31622400000 milliseconds"),
        ("/control/reset", #"{"clock":1e308}"#, "'clock' must be a number from 0 to 253402300799 seconds, not 1e+308"),
        ("/control/reset", #"{"clock":1e17}"#, "'clock' must be a number from 0 to 253402300799 seconds, not 1e+17"),
        ("/control/reset", #"{"clock":-1}"#, "'clock' must be a number from 0 to 253402300799 seconds, not -1"),
        ("/control/fixtures", #"{"app":{"heartbeatTimeout":1e308}}"#, "'heartbeatTimeout' must be a number from 0.001 to 86400 seconds"),
        ("/control/fixtures", #"{"app":{"loginTimeout":0}}"#, "'loginTimeout' must be a number from 0.001 to 86400 seconds, not 0"),
        ("/control/fixtures", #"{"users":[{"uid":"zed","lastActiveAt":1e308}]}"#,
         "users[0]: user zed: 'lastActiveAt' must be a number from 0 to 253402300799 seconds, not 1e+308"),
        ("/control/fixtures", #"{"users":[{"uid":"zed","deactivatedAt":-1.8e19}]}"#, "users[0]: user zed: 'deactivatedAt' must be a number from 0"),
        ("/control/faults", #"{"fault":"link","dropPercent":1e308}"#, "'dropPercent' must be a number from 0 to 100 percent"),
        ("/control/faults", #"{"fault":"link","delayMs":-9223372036854775808}"#, "'delayMs' must be an integer from 0 to 3600000"),
        ("/control/faults", #"{"fault":"delay","ms":1e308}"#, "delay needs 'ms', an integer from 0 to 3600000"),
        ("/control/push", #"{"uid":"alice","close":{"code":1e308}}"#, "'close.code' must be an integer from 1000 to 4999"),
    ])
    func aNumberOutOfRangeIs400NamingItsFieldAndTheServerKeepsServing(path: String, body: String, message: String) throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let before = f.now
        let reply = try f.control("POST", path, body: body)
        #expect(reply.status == 400)
        #expect(reply.json?["error"]?.stringValue == message || reply.json?["error"]?.stringValue?.hasPrefix(message) == true,
                "\(reply.json?["error"] ?? nil)")
        #expect(f.now == before, "the clock did not move")
        #expect(try f.control("GET", "/control/health").status == 200)
        #expect(alice.request("ping") != nil, "the session is still served")
        #expect(!alice.isClosed)
    }

    @Test func theLargestValuesInRangeAreTakenExactly() throws {
        let f = try ServerFixture()
        let reply = try f.control("POST", "/control/clock/advance", body: #"{"seconds":31622400}"#)
        #expect(reply.status == 200)
        #expect(f.now == Instant.virtualEpoch.advanced(by: 31_622_400_000))
        #expect(try f.control("POST", "/control/reset", body: #"{"clock":253402300799}"#).status == 200)
        #expect(f.now == Instant(milliseconds: 253_402_300_799_000))
        #expect(try f.control("POST", "/control/clock/advance", body: #"{"seconds":31622400}"#).status == 200,
                "a year after the latest instant still fits")
    }

    @Test func theHelperRefusesWhatCannotBeConverted() {
        #expect(throws: BoundedNumberError.self) { try BoundedNumber.check(Double.nan, "'x'", in: 0...1) }
        #expect(throws: BoundedNumberError.self) { try BoundedNumber.check(-Double.infinity, "'x'", in: -1e308...0) }
        #expect(throws: BoundedNumberError.self) { try BoundedNumber.milliseconds(seconds: 1e300, "'x'", in: 0...1e301) }
        #expect(throws: BoundedNumberError.self) { try BoundedNumber.integer(300.0, "'x'", in: 0...1000, as: UInt8.self) }
        #expect((try? BoundedNumber.integer(2.4, "'x'", in: 0...10, as: Int.self)) == 2)
        #expect((try? BoundedNumber.instant(seconds: 1.0005, "'t'")) == Instant(milliseconds: 1001))
        #expect(throws: BoundedNumberError(field: "--trace-memory", value: "17592186044416", range: "0 to 1048576", unit: "MiB",
                                           integral: true)) {
            try BoundedNumber.check(17_592_186_044_416, "--trace-memory", in: 0...1_048_576, unit: "MiB")
        }
    }
}
