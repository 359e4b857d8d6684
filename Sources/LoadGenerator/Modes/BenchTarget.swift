import EventLoop

/// The server under test and how to reach it: one server, or the nodes of one cluster
/// (docs/CLUSTER.md), whose connections the modes spread over the nodes.
public struct BenchTarget: Sendable {
    /// The servers (loopback only); ``address`` is the first.
    public var addresses: [SocketAddress]
    /// Local addresses connections are bound to, in turn (empty: let the kernel choose).
    public var sourceHosts: [String] = []
    /// The servers' processes, for their CPU time and memory; empty when unknown.
    public var serverPIDs: [Int32] = []
    /// `authKey` sent with every login.
    public var authKey = "mockchat-dev-key"
    /// Print a progress line on stderr: once a second on a terminal, every few seconds in a log.
    public var showProgress = true

    public init(addresses: [SocketAddress]) {
        precondition(!addresses.isEmpty, "a bench needs a server")
        self.addresses = addresses
    }

    /// The first server (the only one, unless a cluster's nodes were given).
    public var address: SocketAddress { addresses[0] }

    /// The server connection `index` goes to: the servers in turn.
    public func address(for index: Int) -> SocketAddress { addresses[index % addresses.count] }

    /// The same target with only the servers at `indices`.
    public func narrowed(to indices: [Int]) -> BenchTarget {
        var target = self
        target.addresses = indices.map { addresses[$0] }
        return target
    }

    /// All servers' addresses, as `--server` takes them.
    public var addressList: String { addresses.map(\.description).joined(separator: ",") }

    /// A report's `server` setting: all servers' addresses, labelled `clusterLabel` when
    /// there are several.
    func serverFigure(clusterLabel: String = "servers (cluster nodes)") -> BenchReport.Figure {
        .init("server", .string(addressList), addresses.count > 1 ? clusterLabel : "server")
    }

    /// The source address of connection `index`, if sources were given.
    public func source(for index: Int) -> SocketAddress? {
        guard !sourceHosts.isEmpty else { return nil }
        return SocketAddress(host: sourceHosts[index % sourceHosts.count], port: 0)
    }

    /// The probe of the first server's process, if known.
    public var server: ProcessProbe? { serverPIDs.first.map(ProcessProbe.init(pid:)) }

    /// The probes of every server process given.
    public var servers: [ProcessProbe] { serverPIDs.map(ProcessProbe.init(pid:)) }
}
