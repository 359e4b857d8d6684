import ChatProtocol
import EventLoop
@testable import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

/// The control API cannot be driven from a web page, and secrets stay out of its replies.
@Suite("Control API access")
struct ControlSecurityTests {
    /// A control request with the given extra header lines, sent as raw HTTP.
    func request(_ f: ServerFixture, _ method: String = "POST", _ path: String = "/control/faults",
                 host: String? = nil, headers: [String] = [], body: String = #"{"fault":"refuseConnections"}"#) throws -> HTTPReply {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(host ?? f.server.address.description)\r\n"
        for header in headers { text += header + "\r\n" }
        text += "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        let reply = try f.rawHTTP(text)
        f.settle()
        return reply
    }

    @Test func aCrossSiteSimplePostChangesNothing() throws {
        let f = try ServerFixture()
        let attack = try request(f, host: "attacker.example",
                                 headers: ["Origin: http://attacker.example", "Content-Type: text/plain"])
        #expect(attack.status == 403)
        #expect(attack.json?["error"]?.stringValue?.contains("Host 'attacker.example'") == true)
        #expect(!f.server.faults.refuseConnections)
        // Each rule on its own.
        #expect(try request(f, headers: ["Content-Type: text/plain"]).status == 415)
        #expect(try request(f, headers: ["Content-Type: application/json", "Origin: http://attacker.example"]).status == 403)
        #expect(try request(f, headers: ["Content-Type: application/json", "Origin: null"]).status == 403)
        #expect(try request(f, host: "rebound.example:8080", headers: ["Content-Type: application/json"]).status == 403)
        #expect(!f.server.faults.refuseConnections)
        // What the harness and curl send is served.
        #expect(try request(f, host: "localhost:1234", headers: ["Content-Type: application/json; charset=utf-8",
                                                                 "Origin: http://127.0.0.1:3000"]).status == 200)
        #expect(f.server.faults.refuseConnections)
    }

    @Test func aTokenIsRequiredWhenConfigured() throws {
        let f = try ServerFixture(access: ControlAccess(token: "s3cret"))
        let json = "Content-Type: application/json"
        #expect(try request(f, headers: [json]).status == 401)
        #expect(try request(f, headers: [json, "Authorization: Bearer wrong"]).status == 401)
        #expect(!f.server.faults.refuseConnections)
        #expect(try request(f, host: "mockchat.ci.internal", headers: [json, "Authorization: Bearer s3cret"]).status == 200)
        #expect(f.server.faults.refuseConnections)
    }

    @Test func configuredHostNamesAreAccepted() throws {
        let f = try ServerFixture(access: ControlAccess(allowedHosts: ["mockchat.test"]))
        #expect(try request(f, "GET", "/control/health", host: "mockchat.test:8080", body: "").status == 200)
        #expect(try request(f, "GET", "/control/health", host: "other.test", body: "").status == 403)
    }

    /// A rebinding page's name that begins like a loopback address was taken for one
    /// (issue 26, defect 3): each of these changed the faults before.
    @Test func loopbackNamesAreMatchedExactlyNeverByPrefix() throws {
        let f = try ServerFixture(access: ControlAccess(allowedHosts: ["mockchat.test"]))
        let json = "Content-Type: application/json"
        for host in ["127.0.0.1.rebind.attacker.example", "127.0.0.1.rebind.attacker.example:8080", "127.evil.example",
                     "127.0.0.1:80:80", "localhost.attacker.example", "[::1].attacker.example", "::ffff:127.0.0.1.x.example",
                     "mockchat.test.attacker.example"] {
            let reply = try request(f, host: host, headers: [json])
            #expect(reply.status == 403, "Host \(host)")
        }
        for origin in ["http://127.0.0.1.rebind.attacker.example", "http://127.0.0.1.rebind.attacker.example:3000",
                       "https://localhost.attacker.example", "http://[::1].attacker.example"] {
            let reply = try request(f, headers: [json, "Origin: \(origin)"])
            #expect(reply.status == 403, "Origin \(origin)")
        }
        #expect(!f.server.faults.refuseConnections)
        for host in ["127.0.0.1", "127.1.2.3:8080", "localhost", "LOCALHOST:1", "[::1]", "[::1]:8080", "mockchat.test:80"] {
            #expect(try request(f, "GET", "/control/health", host: host, body: "").status == 200, "Host \(host)")
        }
        for origin in ["http://127.0.0.1:3000", "http://[::1]:8080", "http://localhost", "https://mockchat.test"] {
            #expect(try request(f, "GET", "/control/health", headers: ["Origin: \(origin)"], body: "").status == 200, "Origin \(origin)")
        }
    }

    @Test func loopbackIncludesIPv4MappedAddresses() {
        #expect(!SocketAddress(host: "127.0.0.1.rebind.attacker.example", port: 1).isLoopback)
        #expect(!SocketAddress(host: "127.0.0", port: 1).isLoopback)
        #expect(SocketAddress(host: "127.255.255.254", port: 1).isLoopback)
        #expect(SocketAddress(host: "::ffff:127.0.0.1", port: 1).isLoopback)
        #expect(SocketAddress(host: "::FFFF:127.1.2.3", port: 1).isLoopback)
        #expect(SocketAddress(host: "::1", port: 1).isLoopback)
        #expect(!SocketAddress(host: "::ffff:10.0.0.1", port: 1).isLoopback)
        #expect(!SocketAddress(host: "128.0.0.1", port: 1).isLoopback)
    }

    @Test func secretsAreRedactedInTheTraceAndItsReplies() throws {
        let f = try ServerFixture()
        let alice = try f.connect()
        _ = alice.login(uid: "alice", device: "a", platform: .desktop, presence: .none)
        let login = try #require(f.server.trace.entries.first { $0.kind == .in && $0.frame?["op"] == "login" })
        #expect(login.frame?["authKey"] == .string(TraceLog.redacted))
        let reply = try f.control("GET", "/control/trace")
        #expect(!reply.text.contains("mockchat-dev-key"))
        #expect(reply.text.contains(TraceLog.redacted))

        // A login frame with a syntax error kept its key in clear (issue 26): now redacted too.
        let broken = try f.connect()
        broken.send(text: #"{"id":1,"op":"login","uid":"bob","authKey" : "mockchat-dev-key\"x","token":"bob-token","#)
        f.settle()
        let text = try #require(f.server.trace.entries.last { $0.kind == .in && $0.frame == nil }?.text)
        #expect(!text.contains("mockchat-dev-key") && !text.contains("bob-token"), "\(text)")
        #expect(text.contains(#""authKey" : "<redacted>","token":"<redacted>","#), "\(text)")
        #expect(!(try f.control("GET", "/control/trace")).text.contains("mockchat-dev-key"))
        #expect(TraceLog.redactingText(#"{"authKey":"unterminated"#) == #"{"authKey":"<redacted>""#)

        let open = try TraceLog(redactsSecrets: false)
        open.record(.in, time: f.now, frame: ["op": "login", "token": "bob-token"])
        #expect(open.entries.first?.frame?["token"] == "bob-token")
    }
}
