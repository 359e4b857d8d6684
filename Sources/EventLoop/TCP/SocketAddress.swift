import CLibUV

/// An IP address and port.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// True when the host is an IP address literal in 127.0.0.0/8, `::1`, or 127.0.0.0/8
    /// mapped into IPv6 (`::ffff:127.0.0.1`, how a dual-stack socket bound to `::` sees an
    /// IPv4 loopback peer). The text is parsed as an address, never matched by prefix: a
    /// name such as `127.0.0.1.rebind.example` is not an address and so not loopback.
    public var isLoopback: Bool {
        var v4 = [UInt8](repeating: 0, count: 4)
        if uv_inet_pton(AF_INET, host, &v4) == 0 { return v4[0] == 127 }
        var v6 = [UInt8](repeating: 0, count: 16)
        guard uv_inet_pton(AF_INET6, host, &v6) == 0 else { return false }
        let mapped = v6[0..<10].allSatisfy { $0 == 0 } && v6[10] == 0xFF && v6[11] == 0xFF
        return v6[0..<15].allSatisfy { $0 == 0 } && v6[15] == 1 || mapped && v6[12] == 127
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    init?(_ storage: UnsafePointer<sockaddr_storage>) {
        var name = [CChar](repeating: 0, count: 64)
        var port = 0
        let status: Int32
        switch Int32(storage.pointee.ss_family) {
        case AF_INET:
            status = storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                port = Int(UInt16(bigEndian: sin.pointee.sin_port))
                return uv_ip4_name(sin, &name, name.count)
            }
        case AF_INET6:
            status = storage.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin in
                port = Int(UInt16(bigEndian: sin.pointee.sin6_port))
                return uv_ip6_name(sin, &name, name.count)
            }
        default:
            return nil
        }
        guard status == 0 else { return nil }
        let length = name.firstIndex(of: 0) ?? name.count
        self.init(host: String(decoding: name[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self), port: port)
    }

    /// Resolves a numeric host into a `sockaddr_storage` (no DNS lookups).
    func storage() throws(UVError) -> sockaddr_storage {
        var storage = sockaddr_storage()
        let status: Int32 = withUnsafeMutablePointer(to: &storage) { pointer in
            if host.contains(":") {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    uv_ip6_addr(host, Int32(port), $0)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                uv_ip4_addr(host == "localhost" ? "127.0.0.1" : host, Int32(port), $0)
            }
        }
        guard status == 0 else { throw UVError(status, "uv_ip_addr(\(host))") }
        return storage
    }
}
