import ArgumentParser
import MockChatCore
import ConformanceHarness

/// The driver flags `mockchat test` and `mockchat fuzz` share (docs/DRIVER.md): which
/// driver runs the clients, how long it may take to answer, and real time with its
/// tolerance. Declared once, checked once.
struct DriverOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Drive the clients through this driver command, one process per scenario or history (docs/DRIVER.md).",
                               valueName: "command"))
    var sdk: String?

    @Option(help: ArgumentHelp("Wait for a driver to dial in over WebSocket at HOST:PORT and drive the clients through it.",
                               valueName: "host:port"))
    var sdkListen: String?

    @OptionGroup var timeout: DriverTimeoutOption

    @Flag(help: "Real time: the server on the system clock, `advance` waits, `at` checks and compared times use --tolerance.")
    var wallClock = false

    @Option(help: "Tolerance of `at` checks and compared times in wall-clock mode, e.g. 100ms or 0.25 (seconds; default 100ms).")
    var tolerance: String = "100ms"

    func validate() throws {
        guard sdk == nil || sdkListen == nil else { throw ValidationError("give --sdk or --sdk-listen, not both") }
    }

    /// Seconds a driver has to answer each request.
    var driverTimeout: Double { timeout.driverTimeout }

    /// Whether a driver was named (`--sdk` or `--sdk-listen`).
    var namesDriver: Bool { sdk != nil || sdkListen != nil }

    /// `--tolerance` in seconds.
    func toleranceSeconds() throws -> Double {
        do {
            return Double(try ScenarioLoader.duration(Double(tolerance).map { .double($0) } ?? .string(tolerance))) / 1000
        } catch {
            throw ValidationError("--tolerance: \(error)")
        }
    }

    /// The driver to run the clients through: the `--sdk` command, or a listener at
    /// `--sdk-listen` (its address passed to `waiting` to tell the user); nil for the
    /// reference model in this process.
    func source(waiting: (String) -> Void) throws -> CatalogueRunner.DriverSource? {
        if let sdk { return .command(sdk) }
        guard let sdkListen else { return nil }
        let listener = try DriverListener(address: try DriverCommand.address(sdkListen))
        waiting("waiting for a driver at ws://\(listener.address)")
        return .listener(listener)
    }
}

/// `--driver-timeout`, which `mockchat matrix` shares with `test` and `fuzz` (its `--sdk`
/// names a column as well, so it declares that one itself).
struct DriverTimeoutOption: ParsableArguments {
    @Option(help: "Seconds a driver has to answer each request (default 10).")
    var driverTimeout: Double = 10

    func validate() throws {
        try checkFlags { () throws(BoundedNumberError) in
            _ = try BoundedNumber.check(driverTimeout, "--driver-timeout", in: 0.001...BoundedNumber.daySeconds, unit: "seconds")
        }
    }
}
