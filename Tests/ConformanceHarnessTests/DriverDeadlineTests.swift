import ChatProtocol
@testable import ConformanceHarness
import EventLoop
import Foundation
import Synchronization
import Testing

/// A driver whose next deadline never moves (docs/DRIVER.md, "One timeline"), over the
/// WebSocket transport: the scenario fails with an error that names the driver and the
/// deadline instead of advancing at one instant for ever.
@Suite struct DriverDeadlineTests {
    /// The reference driver, dialling in over a real socket, with the `nextDeadline` of
    /// every state it reports held at 500 ms after its first clock reading: a timer it
    /// keeps listing after it fired.
    static func startStuckDriver(dialling address: SocketAddress) {
        let stuckAt = Mutex<Int64?>(nil)
        startReferenceDriver(dialling: address, seed: 5) { message in
            guard var reply = message.objectValue, var state = reply["state"]?.objectValue,
                  let now = state["now"]?.intValue else { return message }
            let due = stuckAt.withLock { stuck in
                if stuck == nil { stuck = now + 500 }
                return stuck!
            }
            state["nextDeadline"] = .integer(due)
            reply["state"] = .object(state)
            return .object(reply)
        }
    }

    /// Hangs before the bound (the advance asks the driver to fire at the same instant
    /// again and again); fails clearly after it.
    @Test func aDeadlineThatNeverMovesFailsTheScenarioNamingTheDriver() throws {
        let listener = try DriverListener(address: SocketAddress(host: "127.0.0.1", port: 0))
        Self.startStuckDriver(dialling: listener.address)
        var options = CatalogueRunner.Options()
        options.driver = .listener(listener)
        var runner = ScenarioRunner(options: options)
        runner.profilesFolder = Package.path("Fixtures/profiles")
        let started = Date()
        let result = runner.run(try Package.load("Fixtures/scenarios/connection/manual-connect-starts-events.yaml"))
        #expect(result.verdict == .failed)
        let message = result.message ?? ""
        #expect(message.contains("driver connected at \(listener.address) (mockchat-reference"), "\(message)")
        #expect(message.contains("reported its next deadline at t = 0.5 s for \(Timeline.turnsWithoutProgress) turns"),
                "\(message)")
        #expect(Date().timeIntervalSince(started) < 60)
    }
}

/// The reference driver on a thread of its own, dialling the harness at `address` over a
/// real WebSocket; `rewrite` may change each message it sends.
func startReferenceDriver(dialling address: SocketAddress, seed: UInt64,
                          rewrite: @escaping @Sendable (JSONValue) -> JSONValue = { $0 }) {
    let profiles = Package.path("Fixtures/profiles")
    Thread.detachNewThread {
        guard let (bridge, _) = try? WebSocketBridge.start({ loop, bridge throws(ScenarioError) in
            _ = WebSocketClient.connect(on: loop, to: address, path: "/", seed: seed) { result in
                if case .success(let socket) = result { bridge.adopt(socket) } else { bridge.failed("no harness") }
            }
        }), bridge.waitForFirstConnection(timeout: 10),
            let driver = try? ReferenceDriver(inbox: bridge.inbox, profilesFolder: profiles, output: { message in
                _ = bridge.send(Array(rewrite(message).serialized().utf8))
            }) else { return }
        driver.serve()
    }
}
