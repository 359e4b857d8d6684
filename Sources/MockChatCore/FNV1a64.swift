/// FNV-1a with 64 bits: a hash that is the same in every process and on every machine
/// (Swift's `Hasher` is seeded per process). It names regression files after their
/// text, derives each client's seed from its name, picks which fuzz inputs run, and
/// sums up a long frame in the trace.
public enum FNV1a64 {
    /// The standard offset basis, where a hash starts.
    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    /// The standard 64-bit FNV prime.
    public static let prime: UInt64 = 0x100_0000_01b3

    /// The hash of `bytes`, starting from `basis`.
    @inlinable
    public static func hash(_ bytes: some Sequence<UInt8>, basis: UInt64 = offsetBasis) -> UInt64 {
        var hash = basis
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* prime }
        return hash
    }

    /// The hash of `text`'s UTF-8 bytes.
    @inlinable
    public static func hash(_ text: String) -> UInt64 { hash(text.utf8) }
}
