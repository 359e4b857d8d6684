import ChatProtocol
import EventLoop

/// The web console (docs/CONSOLE.md): the page at `/console` and the two control routes
/// only it uses, the live stream and "save as scenario". Every other thing the page does
/// is a plain control API request.
///
/// Access: each of these requests passes the control API's own check
/// (``ControlAccess``) first. The page's request may carry the control token as
/// `?token=` (a browser cannot add a header to a page it navigates to), which counts as
/// its `Authorization` header. The console routes under `/control/` also need the
/// per-process console token, which only the page served here holds
/// (`X-Console-Token`); a page of another origin can neither read it nor send it
/// without a preflight the server never answers.
extension ChatServer {
    /// The routing of a console request, or nil when `request` is not one.
    func consoleRouting(_ request: HTTPRequest, peer: SocketAddress?) -> WebServer.Routing? {
        guard let console else { return nil }
        let route = request.method + " " + request.path
        switch route {
        case "GET /console", "GET /console/":
            var checked = request
            if let token = request.query["token"], checked.headerValues("Authorization").isEmpty {
                checked.headers.append((name: "Authorization", value: "Bearer " + token))
            }
            if let refusal = controlRefusal(checked, peer: peer) { return .respond(refusal) }
            return .respond(console.page())
        case "GET /control/console/events", "POST /control/console/scenario":
            if let refusal = controlRefusal(request, peer: peer) ?? console.refusal(request) { return .respond(refusal) }
            if route == "POST /control/console/scenario" { return .respond(scenarioResponse(request)) }
            let since: Int
            do throws(ControlError) {
                since = try Self.queryInteger(request.query, "since", in: 0...Int.max) ?? 0
            } catch {
                return .respond(Self.consoleError(error.status, error.message))
            }
            let head = HTTPResponse(status: 200, headers: [("Content-Type", "application/x-ndjson"),
                                                          ("Cache-Control", "no-store"),
                                                          ("X-Trace-Format", String(TraceLog.formatVersion))])
            return .stream(head) { [unowned self] connection in self.console?.streams.open(connection, since: since) }
        default:
            return nil
        }
    }

    /// `POST /control/console/scenario`: the kept trace, or the entries from `from` to
    /// `to` (sequence numbers), as scenario YAML made by ``ConsoleState/scenarioMaker``.
    private func scenarioResponse(_ request: HTTPRequest) -> HTTPResponse {
        guard let maker = console?.scenarioMaker else {
            return Self.consoleError(501, "this server cannot make scenarios (it runs without `mockchat serve`)")
        }
        let body: JSONValue
        do {
            body = request.body.isEmpty ? .object(JSONObject()) : try JSONParser.parse(request.body)
        } catch {
            return Self.consoleError(400, "the body is not valid JSON: \(error)")
        }
        func bound(_ key: String) -> Int?? {
            guard let value = body[key], value != .null else { return .some(nil) }
            guard let number = value.intValue, number >= 0 else { return nil }
            return .some(Int(number))
        }
        guard let from = bound("from"), let to = bound("to") else {
            return Self.consoleError(400, "'from' and 'to' must be sequence numbers, 0 or more")
        }
        let name = body["name"]?.stringValue ?? "console"
        guard !name.isEmpty, name.utf8.count <= 80, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            return Self.consoleError(400, "'name' must be 1 to 80 letters, digits, '-' or '_'")
        }
        let text = SessionTrace.text(of: trace, from: from ?? 0, to: to ?? Int.max)
        guard let text else { return Self.consoleError(404, "no trace entries in that range") }
        switch maker(String(decoding: text, as: UTF8.self), name) {
        case .success(let made):
            return .json(status: 200, body: serialized(["yaml": .string(made.yaml), "steps": .integer(Int64(made.steps)),
                                                       "name": .string(name)]))
        case .failure(let error):
            return Self.consoleError(422, error.message)
        }
    }

    private func controlRefusal(_ request: HTTPRequest, peer: SocketAddress?) -> HTTPResponse? {
        configuration.controlAccess.refusal(for: request, peer: peer, listeningHost: configuration.address.host)
    }

    static func consoleError(_ status: Int, _ message: String) -> HTTPResponse {
        .json(status: status, body: serialized(["error": .string(message)]))
    }

    private static func serialized(_ value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = []
        value.serialize(into: &bytes)
        return bytes
    }

    private func serialized(_ value: JSONValue) -> [UInt8] { Self.serialized(value) }
}

/// What `scenarios from-trace` makes of a trace: the scenario's YAML and its step count.
public struct ConsoleScenario: Sendable {
    public var yaml: String
    public var steps: Int
    public init(yaml: String, steps: Int) {
        self.yaml = yaml
        self.steps = steps
    }
}

/// Why a trace did not become a scenario.
public struct ScenarioMakingError: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// The console's state in a server that serves it.
final class ConsoleState {
    /// The per-process token the page gets on load and sends on every console request.
    let token: String
    let streams: ConsoleStreams
    /// Turns a trace file's text into a scenario named `name` (set by `mockchat serve`,
    /// which has `scenarios from-trace`; the server module cannot import it).
    var scenarioMaker: ((_ traceText: String, _ name: String) -> Result<ConsoleScenario, ScenarioMakingError>)?

    init(loop: EventLoop, trace: TraceLog) {
        token = Self.randomHex(bytes: 16)
        streams = ConsoleStreams(loop: loop, trace: trace)
    }

    /// The page, with this process's token and a fresh nonce for its inline script and style.
    func page() -> HTTPResponse {
        let nonce = Self.randomHex(bytes: 12)
        // The token and nonce go in first, so that nothing in the style or script is replaced.
        let html = EmbeddedConsole.html.replacing("{{TOKEN}}", with: token).replacing("{{NONCE}}", with: nonce)
            .replacing("/*{{CSS}}*/", with: EmbeddedConsole.css).replacing("/*{{JS}}*/", with: EmbeddedConsole.js)
        return HTTPResponse(status: 200, headers: [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Cache-Control", "no-store"),
            // No framing (a page of another origin cannot put the console under a click),
            // no other scripts or styles, and requests only to this origin.
            ("Content-Security-Policy", "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; "
                + "connect-src 'self'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
            ("X-Frame-Options", "DENY"),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
        ], body: Array(html.utf8))
    }

    /// 403 unless `request` carries this process's console token.
    func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.headerValues("X-Console-Token") != [token] else { return nil }
        return ChatServer.consoleError(403, "console requests need the X-Console-Token of the page this server served at /console")
    }

    private static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte >> 4, radix: 16) + String(byte & 15, radix: 16)
        }.joined()
    }
}
