import ArgumentParser
import ChatProtocol
import ConformanceHarness
import EventLoop
import Foundation

/// `mockchat driver`: the built-in reference model behind driver protocol v1.
struct DriverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "driver",
        abstract: "Serve the reference SDK model over the driver protocol (docs/DRIVER.md).",
        discussion: """
            Without --connect it speaks JSON lines on stdin and stdout, as
            `mockchat test --sdk 'mockchat driver'` expects. With --connect it dials a
            harness started with `mockchat test --sdk-listen HOST:PORT`.
            """)

    @Option(help: "Dial a harness listening at ws://HOST:PORT instead of using stdio.")
    var connect: String?

    @Option(help: "Where the profiles (<name>.yaml) are.")
    var profiles = "Fixtures/profiles"

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let driver: ReferenceDriver
        if let connect {
            let address = try Self.address(connect)
            let (bridge, _) = try WebSocketBridge.start { loop, bridge throws(ScenarioError) in
                _ = WebSocketClient.connect(on: loop, to: address, path: "/", seed: 1) { result in
                    switch result {
                    case .success(let socket): bridge.adopt(socket)
                    case .failure(let failure): bridge.failed("cannot reach the harness at \(connect): \(failure)")
                    }
                }
            }
            guard bridge.waitForFirstConnection(timeout: 30) else {
                throw ValidationError("no answer from the harness at \(connect) within 30 s")
            }
            driver = try ReferenceDriver(inbox: bridge.inbox, profilesFolder: profiles) { message in
                var bytes: [UInt8] = []
                message.serialize(into: &bytes)
                bridge.send(bytes)
            }
        } else {
            let inbox = DriverInbox()
            Thread.detachNewThread {
                while let line = readLine(strippingNewline: true) { inbox.push(.message(Array(line.utf8))) }
                inbox.push(.closed("stdin ended"))
            }
            driver = try ReferenceDriver(inbox: inbox, profilesFolder: profiles) { message in
                var bytes: [UInt8] = []
                message.serialize(into: &bytes)
                bytes.append(10)
                bytes.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let written = write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                        if written <= 0 { if errno == EINTR { continue } else { return } }
                        offset += written
                    }
                }
            }
        }
        driver.serve()
    }

    /// `ws://HOST:PORT` or `HOST:PORT`.
    static func address(_ text: String) throws -> SocketAddress {
        var rest = Substring(text)
        if rest.hasPrefix("ws://") { rest = rest.dropFirst(5) }
        let hostPort = rest.prefix { $0 != "/" }
        guard let colon = hostPort.lastIndex(of: ":"), let port = Int(hostPort[hostPort.index(after: colon)...]),
              (0...65535).contains(port) else {
            throw ValidationError("expected HOST:PORT, got '\(text)'")
        }
        return SocketAddress(host: String(hostPort[..<colon]), port: port)
    }
}
