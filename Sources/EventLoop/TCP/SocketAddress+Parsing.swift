extension SocketAddress {
    /// Reads a server address as every `--server` option takes it:
    /// `ws://HOST:PORT`, `ws://HOST:PORT/v1/ws`, `http://HOST:PORT` or `HOST:PORT`
    /// (`[::1]:PORT` for IPv6; `localhost` means 127.0.0.1). Nil when it is none of these.
    public init?(server text: String) {
        var rest = Substring(text)
        for scheme in ["ws://", "http://"] where rest.hasPrefix(scheme) { rest = rest.dropFirst(scheme.count) }
        let hostPort = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(hostPort.count)
        guard path.isEmpty || path == "/" || path == "/v1/ws",
              let colon = hostPort.lastIndex(of: ":"), let port = Int(hostPort[hostPort.index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
        var host = String(hostPort[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host == "localhost" ? "127.0.0.1" : host, port: port)
    }
}
