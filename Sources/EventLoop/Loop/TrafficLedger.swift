/// Counts what is in flight between endpoints living on one loop.
///
/// When a server and its clients share a loop, the loop has settled once every byte
/// written has been read, every connect has been accepted, and every close has been
/// seen by the other side. Nothing here involves wall time, which is what makes
/// virtual-clock runs reproducible. Connections with a peer outside the loop are not
/// counted.
public final class TrafficLedger {
    /// Bytes written by in-process endpoints to an in-process peer.
    public private(set) var bytesWritten = 0
    /// Bytes read by in-process endpoints from an in-process peer (or discarded
    /// because the reader closed first).
    public private(set) var bytesRead = 0
    /// Connects, accepts, writes and closes that have started but not completed.
    public private(set) var operationsInFlight = 0

    /// True when nothing is on its way between in-process endpoints.
    public var isSettled: Bool { bytesWritten == bytesRead && operationsInFlight == 0 }

    private var endpoints: [EndpointPair: TCPConnection] = [:]
    private var listeningPorts: Set<Int> = []
    private var awaitingAccept: Set<EndpointPair> = []

    func began() { operationsInFlight += 1 }
    func ended() { operationsInFlight -= 1 }

    func listening(on port: Int) { listeningPorts.insert(port) }
    func stoppedListening(on port: Int) { listeningPorts.remove(port) }

    /// A connection became usable (connected or accepted).
    func register(_ connection: TCPConnection) {
        guard let pair = connection.endpoints else { return }
        endpoints[pair] = connection
        if let peer = endpoints[pair.reversed] {
            connection.peerIsLocal = true
            peer.peerIsLocal = true
            if awaitingAccept.remove(pair.reversed) != nil { ended() }
        } else if listeningPorts.contains(pair.remote.port), pair.remote.isLoopback {
            // A client reached one of our listeners: its accept is on the way.
            connection.peerIsLocal = true
            awaitingAccept.insert(pair)
            began()
        }
    }

    /// The in-process peer of `connection`, while it is open.
    func peer(of connection: TCPConnection) -> TCPConnection? {
        guard let pair = connection.endpoints else { return nil }
        return endpoints[pair.reversed]
    }

    /// A connection closed: what its peer wrote and it never read will not be read,
    /// and the peer has an end-of-stream to observe.
    func unregister(_ connection: TCPConnection) {
        guard let pair = connection.endpoints, endpoints[pair] === connection else { return }
        endpoints[pair] = nil
        writeOffUndelivered(connection)
        if awaitingAccept.remove(pair) != nil {
            // Never accepted: nobody in-process will read what it wrote.
            bytesRead += connection.bytesSentToPeer
            ended()
        }
        guard let peer = endpoints[pair.reversed] else { return }
        bytesRead += peer.bytesSentToPeer - connection.bytesReadFromPeer
        peer.bytesSentToPeer = connection.bytesReadFromPeer
        // Writes still queued when a connection closes are cancelled; the peer learns
        // at its end of stream how much really arrived.
        peer.bytesExpectedFromClosedPeer = connection.bytesSentToPeer
        if !peer.awaitingEndOfStream {
            peer.awaitingEndOfStream = true
            began()
        }
    }

    /// Records a write if the peer is in-process; returns whether it was counted.
    func wrote(_ count: Int, by connection: TCPConnection) -> Bool {
        guard connection.peerIsLocal, peer(of: connection) != nil || isAwaitingAccept(connection)
        else { return false }
        bytesWritten += count
        connection.bytesSentToPeer += count
        return true
    }

    func read(_ count: Int, by connection: TCPConnection) {
        guard connection.peerIsLocal else { return }
        bytesRead += count
        connection.bytesReadFromPeer += count
    }

    /// The peer's end of stream (or a reset) reached `connection`.
    func observedEndOfStream(_ connection: TCPConnection) {
        writeOffUndelivered(connection)
        guard connection.awaitingEndOfStream else { return }
        connection.awaitingEndOfStream = false
        ended()
    }

    /// After the peer closed, whatever it sent that has not arrived by the end of the
    /// stream never will: count it as read so the ledger balances.
    private func writeOffUndelivered(_ connection: TCPConnection) {
        guard let expected = connection.bytesExpectedFromClosedPeer else { return }
        connection.bytesExpectedFromClosedPeer = nil
        let missing = expected - connection.bytesReadFromPeer
        if missing > 0 {
            bytesRead += missing
            connection.bytesReadFromPeer = expected
        }
    }

    private func isAwaitingAccept(_ connection: TCPConnection) -> Bool {
        guard let pair = connection.endpoints else { return false }
        return awaitingAccept.contains(pair)
    }
}

/// Both ends of a TCP connection.
struct EndpointPair: Hashable {
    var local: SocketAddress
    var remote: SocketAddress
    var reversed: EndpointPair { EndpointPair(local: remote, remote: local) }
}
