/// What a silent connection holds back: the bytes written to it, the close its owner
/// asked for, and how the peer's stream ended, in the order they are applied when the
/// silence ends.
struct SilencedTraffic {
    /// How the owner asked to close while silent; the first request wins.
    enum Close { case afterWrites, now, reset }

    var output: [UInt8] = []
    var close: Close?
    /// The peer's end of stream (`.some(nil)`) or failure, seen while silent.
    var end: UVError??
}

extension TCPConnection {
    /// Whether the connection is silent (between ``silence()`` and ``endSilence(release:)``).
    public var isSilenced: Bool { silenced != nil }

    /// Whether the peer's end of stream or reset came while silent (held back, not yet
    /// reported).
    public var peerEndedWhileSilent: Bool { silenced?.end != nil }

    /// Makes the connection silent in both directions, as a network path that loses
    /// every packet would: what is written is held back, a close (orderly, at once or a
    /// reset) is not carried out, and the peer's end of stream or reset is not reported
    /// through ``onEnd``. Reading goes on, so the loop's traffic still balances and the
    /// owner can count what the peer sent; holding that back is the owner's business.
    public func silence() {
        guard state == .open, silenced == nil else { return }
        flushPendingOutput()
        silenced = SilencedTraffic()
    }

    /// Holds back a close the owner asked for while silent (the first one wins);
    /// false when the connection is not silent.
    func holdsClose(_ close: SilencedTraffic.Close) -> Bool {
        guard var held = silenced else { return false }
        if held.close == nil { held.close = close }
        silenced = held
        return true
    }

    /// Holds back the peer's end of stream or a failure (the first one wins); false when
    /// the connection is not silent.
    func holdsEnd(_ error: UVError?) -> Bool {
        guard var held = silenced else { return false }
        if held.end == nil { held.end = .some(error) }
        silenced = held
        return true
    }

    /// Ends the silence. With `release`, what was held is applied in order: the held
    /// output is written, the peer's end (if it came) is reported, then the owner's
    /// held close is carried out. Without, everything held is forgotten.
    public func endSilence(release: Bool) {
        guard let held = silenced else { return }
        silenced = nil
        guard release, state == .open else { return }
        if !held.output.isEmpty { write(held.output) }
        if let end = held.end { onEnd?(end) }
        switch held.close {
        case .afterWrites: closeAfterWrites()
        case .now: close()
        case .reset: reset()
        case nil: break
        }
    }
}
