/// Catches the peer's close frames whose code IANA registered after RFC 6455 and which
/// wslay 1.1 refuses with 1002: 1012 (service restart), 1013 (try again later) and 1014
/// (bad gateway). Real servers send them, so both ends accept and echo them.
///
/// wslay checks a close frame's code only once the frame is complete, after handing
/// each payload chunk (unmasked, its UTF-8 checked as it goes) to the chunk callback.
/// The watch gathers the close payload from those chunks; when the last one completes
/// a close with such a code and a valid UTF-8 reason, the socket queues the echo
/// itself, and wslay's own 1002 then finds a close already queued and is dropped.
/// Every other code keeps wslay's check.
struct RegisteredCloseWatch {
    /// The codes wslay's check predates.
    static let codes: ClosedRange<UInt16> = 1012...1014

    private var length: UInt64?
    private var payload: [UInt8] = []

    /// A frame starts: only a close with a code (2 bytes or more) is watched.
    mutating func frameStarted(opcode: UInt8, length: UInt64) {
        self.length = opcode == 8 && length >= 2 ? length : nil
        payload.removeAll(keepingCapacity: true)
    }

    /// A chunk of the frame's payload; returns the code and reason once a close frame
    /// with one of ``codes`` and a valid UTF-8 reason is complete.
    mutating func chunk(_ bytes: UnsafeBufferPointer<UInt8>) -> (code: UInt16, reason: [UInt8])? {
        guard let length else { return nil }
        payload.append(contentsOf: bytes)
        guard UInt64(payload.count) >= length else { return nil }
        self.length = nil
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        let reason = Array(payload[2...])
        guard Self.codes.contains(code), String(validating: reason, as: UTF8.self) != nil else { return nil }
        return (code, reason)
    }
}
