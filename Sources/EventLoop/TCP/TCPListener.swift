import CLibUV

/// A listening TCP socket that hands each accepted connection to `onAccept`.
public final class TCPListener: HandleOwner {
    public let loop: EventLoop
    private let handle: UnsafeMutablePointer<uv_tcp_t>
    /// The bound address (with the real port when 0 was asked for).
    public private(set) var address: SocketAddress
    private let onAccept: (TCPConnection) -> Void
    private var isOpen = true

    /// Binds and listens on `address`; port 0 picks a free port.
    public init(
        loop: EventLoop, address: SocketAddress, backlog: Int32 = 1024,
        onAccept: @escaping (TCPConnection) -> Void
    ) throws(UVError) {
        self.loop = loop
        self.address = address
        self.onAccept = onAccept
        handle = .allocate(capacity: 1)
        uv_tcp_init(loop.uv, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        do throws(UVError) {
            var storage = try address.storage()
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_bind(handle, $0, 0) }
            }
            guard bound == 0 else { throw UVError(bound, "uv_tcp_bind(\(address))") }
            let listening = handle.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { stream in
                uv_listen(stream, backlog) { server, status in
                    guard let server, let owner = server.pointee.data else { return }
                    Unmanaged<TCPListener>.fromOpaque(owner).takeUnretainedValue().accept(status)
                }
            }
            guard listening == 0 else { throw UVError(listening, "uv_listen(\(address))") }
        } catch {
            close()
            throw error
        }
        if let bound = TCPConnection.address(of: handle, peer: false) { self.address = bound }
        loop.traffic.listening(on: self.address.port)
    }

    /// Stops listening; already accepted connections are not affected.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        loop.traffic.stoppedListening(on: address.port)
        closeOwnedHandle(handle)
    }

    func closeForShutdown() { close() }

    private func accept(_ status: Int32) {
        guard status == 0, isOpen else { return }
        let connection = TCPConnection(loop: loop)
        let accepted = handle.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { server in
            connection.handle.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { client in
                uv_accept(server, client)
            }
        }
        guard accepted == 0 else {
            connection.close()
            return
        }
        connection.didConnect()
        onAccept(connection)
        connection.resumeReading()
    }
}
