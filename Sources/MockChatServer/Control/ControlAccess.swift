import ChatProtocol
import EventLoop

/// Who may use the control API, decided per request before any route runs.
///
/// The control API can refuse every connection or drop every user, so it must not be
/// drivable by a web page that happens to be open on the same machine. A browser can
/// send a "simple" cross-site POST (`Content-Type: text/plain`, no preflight), and a
/// DNS-rebinding page can even read the reply. The rules, in the order they apply:
///
/// 1. **Peer.** Only loopback peers, unless `fromAnywhere` (which requires a token).
/// 2. **Token.** With a token configured, `Authorization: Bearer TOKEN` is required (401).
/// 3. **Host.** Without a valid token, the `Host` header must name a loopback address
///    (an address literal in 127.0.0.0/8, `[::1]`, or `localhost`), the address the server
///    listens on, or one of `allowedHosts`, each matched exactly. A rebinding page's
///    requests carry its own host name (403), whatever it begins with.
/// 4. **Origin.** A request with an `Origin` header whose host is not one of those
///    loopback names or `allowedHosts` is refused (403): browsers add it to cross-site
///    requests, other clients do not.
/// 5. **Content-Type.** A request with a body must say `application/json` (415), which
///    a browser cannot send cross-site without a preflight the server never answers.
public struct ControlAccess: Sendable {
    /// The bearer token every control request must carry, if any.
    public var token: String?
    /// Accept peers that are not on loopback (only together with a token).
    public var fromAnywhere = false
    /// Host names, besides loopback and the listening address, that requests may name.
    public var allowedHosts: [String] = []

    public init(token: String? = nil, fromAnywhere: Bool = false, allowedHosts: [String] = []) {
        self.token = token
        self.fromAnywhere = fromAnywhere
        self.allowedHosts = allowedHosts
    }

    /// The answer to give instead of serving `request`, or nil when it may be served.
    /// `listeningHost` is the address the server was told to listen on.
    public func refusal(for request: HTTPRequest, peer: SocketAddress?, listeningHost: String) -> HTTPResponse? {
        guard fromAnywhere || peer?.isLoopback == true else {
            return Self.refuse(403, "the control API only answers loopback clients (start with --control-from-anywhere and --control-token to change that)")
        }
        var authenticated = false
        if let token {
            let presented = request.headerValues("Authorization").first ?? ""
            guard presented == "Bearer " + token else {
                return Self.refuse(401, "the control API needs 'Authorization: Bearer <token>' (the --control-token of the server)")
            }
            authenticated = true
        }
        if !authenticated {
            let hosts = request.headerValues("Host")
            guard hosts.count == 1, let name = Self.hostName(hosts[0]) else {
                return Self.refuse(403, "the control API needs exactly one Host header")
            }
            guard Self.isLoopbackName(name) || name == listeningHost.lowercased() || allowedHosts.contains(name) else {
                return Self.refuse(403, "Host '\(name.prefix(100))' is not allowed for the control API (loopback names only; see --control-host)")
            }
        }
        for origin in request.headerValues("Origin") {
            let name = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init)
            guard origin.hasPrefix("http://") || origin.hasPrefix("https://"),
                  let name, let host = Self.hostName(name), Self.isLoopbackName(host) || allowedHosts.contains(host)
            else {
                return Self.refuse(403, "Origin '\(origin.prefix(100))' may not use the control API")
            }
        }
        if !request.body.isEmpty {
            let type = request.headerValues("Content-Type").first ?? ""
            let mediaType = type.split(separator: ";").first.map { $0.trimmingSpaces.lowercased() } ?? ""
            guard mediaType == "application/json" else {
                return Self.refuse(415, "control requests with a body must be 'Content-Type: application/json'")
            }
        }
        return nil
    }

    /// The host part of a `Host` value (`name`, `name:port`, `[v6]`, `[v6]:port`),
    /// lowercased; nil when anything but a numeric port follows the host.
    static func hostName(_ value: String) -> String? {
        let text = Substring(value.lowercased())
        var host = text, port: Substring = ""
        if text.hasPrefix("[") {
            guard let end = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<end]
            let rest = text[text.index(after: end)...]
            guard rest.isEmpty || rest.first == ":" else { return nil }
            port = rest.dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, port.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return String(host)
    }

    /// `localhost`, or an IP literal in 127.0.0.0/8 or `::1`: matched exactly, the
    /// address parsed, never by prefix (a rebinding page's `127.0.0.1.attacker.example`
    /// is a name like any other).
    static func isLoopbackName(_ name: String) -> Bool {
        name == "localhost" || SocketAddress(host: name, port: 0).isLoopback
    }

    private static func refuse(_ status: Int, _ message: String) -> HTTPResponse {
        var bytes: [UInt8] = []
        JSONValue.object(JSONObject([("error", .string(message))])).serialize(into: &bytes)
        return .json(status: status, body: bytes)
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
