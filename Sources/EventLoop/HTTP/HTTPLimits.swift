/// Resource limits applied while parsing HTTP requests and evaluating
/// WebSocket upgrade requests. Every limit bounds memory or CPU spent on
/// bytes an untrusted peer controls.
public struct HTTPLimits: Sendable, Equatable {
    /// Largest accepted request head (request line plus header lines,
    /// including line terminators). A larger head is answered with 431.
    public var maxHeadBytes: Int
    /// Largest accepted number of header lines. More is answered with 431.
    public var maxHeaderCount: Int
    /// Largest accepted `Content-Length`. More is answered with 413.
    public var maxBodyBytes: Int
    /// Largest number of elements accepted in a comma-separated header
    /// list such as `Connection` or `Upgrade`, summed over all fields of
    /// that name. More is answered with 400.
    public var maxListElements: Int

    /// Creates a set of limits; every parameter has a conservative default.
    public init(
        maxHeadBytes: Int = 8192,
        maxHeaderCount: Int = 64,
        maxBodyBytes: Int = 1 << 20,
        maxListElements: Int = 32
    ) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
        self.maxListElements = maxListElements
    }
}
