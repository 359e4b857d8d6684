import EventLoop

/// The server under test and how to reach it.
public struct BenchTarget: Sendable {
    /// The server's address (loopback only).
    public var address: SocketAddress
    /// Local addresses connections are bound to, in turn (empty: let the kernel choose).
    public var sourceHosts: [String] = []
    /// The server's process, for its CPU time and memory; nil when unknown.
    public var serverPID: Int32?
    /// `authKey` sent with every login.
    public var authKey = "mockchat-dev-key"
    /// Print a progress line on stderr once a second.
    public var showProgress = true

    public init(address: SocketAddress) { self.address = address }

    /// The source address of connection `index`, if sources were given.
    public func source(for index: Int) -> SocketAddress? {
        guard !sourceHosts.isEmpty else { return nil }
        return SocketAddress(host: sourceHosts[index % sourceHosts.count], port: 0)
    }

    /// The probe of the server's process, if known.
    public var server: ProcessProbe? { serverPID.map(ProcessProbe.init(pid:)) }
}
