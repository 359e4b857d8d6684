import WireKit

/// A Lua script for ``RedisConnection/evaluate(_:_:reply:)``: its source and the SHA-1
/// Redis names it by, computed once when the script is made.
public struct RedisScript: Sendable {
    /// The Lua source, sent once per connection with `SCRIPT LOAD`.
    public let source: String
    /// Lowercase hex, as `EVALSHA` takes it.
    public let sha1: String

    public init(_ source: String) {
        self.source = source
        sha1 = SHA1Digest.hex(of: source)
    }
}
