// The one place that knows the operating system. Linux with glibc is what MockChat is
// built and tested on; the Darwin branches are there so that a macOS build is a small
// step, and are not built or tested by this project.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#endif
import CSystemMemory

/// The calls whose form differs between Linux and Darwin, or that only Linux has.
/// Every module sees the C library through MockChatCore (`@_exported` above).
public enum HostSystem {
    /// A new TCP socket for `family`, closed on exec; -1 with `errno` set on failure.
    public static func streamSocket(family: Int32) -> Int32 {
        #if canImport(Glibc)
        return socket(family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(family, SOCK_STREAM, 0)
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return descriptor
        #endif
    }

    /// Asks the kernel to choose a bound socket's port in `connect` rather than in `bind`
    /// (Linux's `IP_BIND_ADDRESS_NO_PORT`, since 4.2), so many connections from one
    /// address cost O(1) each. Best effort: nothing on Darwin, which has no such option,
    /// or on an older kernel, where the bind picks the port.
    public static func choosePortAtConnect(_ descriptor: Int32) {
        #if canImport(Glibc)
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_IP), IP_BIND_ADDRESS_NO_PORT, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Bytes the kernel has received on `descriptor` and nobody has read yet (FIONREAD),
    /// or nil when the count is unavailable.
    public static func unreadBytes(_ descriptor: Int32) -> Int? {
        var count: Int32 = 0
        #if canImport(Glibc)
        guard ioctl(descriptor, UInt(FIONREAD), &count) == 0 else { return nil }
        #else
        guard ioctl(descriptor, FIONREAD, &count) == 0 else { return nil }
        #endif
        return Int(count)
    }

    /// Hands memory the C allocator keeps for reuse back to the system (glibc's
    /// `malloc_trim`, through the CSystemMemory shim); nothing elsewhere.
    public static func returnFreedMemory() {
        mockchat_return_freed_memory()
    }

    /// Closes a file descriptor (named so that types with a `close()` of their own can call it).
    @discardableResult
    public static func closeDescriptor(_ descriptor: Int32) -> Int32 {
        close(descriptor)
    }

    /// Writes to a file descriptor (named so that types with a `write` of their own can call it).
    @discardableResult
    public static func writeDescriptor(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        write(descriptor, bytes, count)
    }
}
