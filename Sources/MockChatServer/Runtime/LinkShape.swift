import ChatProtocol
import EventLoop

/// One direction of the network path between the server and a client.
public enum LinkDirection: String, Sendable, CaseIterable {
    /// Client to server: frames the server reads.
    case inbound = "in"
    /// Server to client: frames the server writes.
    case outbound = "out"
}

/// How a link treats the frames of one direction: a seeded network emulator.
///
/// Each frame entering the link is either dropped (`dropPercent`) or leaves it after
/// `delayMs` plus a jitter drawn uniformly from `-jitterMs...jitterMs`. Frames keep
/// their order, as on a TCP stream: a frame never leaves before the one ahead of it.
/// With `bytesPerSecond`, a frame leaves when its last payload byte would have crossed
/// a link of that rate behind the frames ahead of it. `sliceBytes` (outbound only)
/// cuts the server's TCP writes into small pieces (``WriteSlicing``), and `closeFrames`
/// false (outbound only) withholds the close frames of the server's closes.
///
/// Every random draw comes from one ``SplitMix64`` seeded with `seed`, on the
/// server's clock, so the same requests and seed give the same times and drops.
public struct LinkShape: Sendable {
    public var delayMs: Int64 = 0
    public var jitterMs: Int64 = 0
    /// 0: no limit.
    public var bytesPerSecond: Int = 0
    /// Percent of frames dropped, 0 to 100 (two decimals count).
    public var dropPercent: Double = 0
    /// Outbound only, 0: whole writes.
    public var sliceBytes: Int = 0
    /// Outbound only: false makes the server's closes end the stream without a close
    /// frame, as a middlebox that loses it would.
    public var closeFrames = true
    public var seed: UInt64 = 1
    private var random = SplitMix64(seed: 1)

    public init(delayMs: Int64 = 0, jitterMs: Int64 = 0, bytesPerSecond: Int = 0, dropPercent: Double = 0,
                sliceBytes: Int = 0, closeFrames: Bool = true, seed: UInt64 = 1) {
        self.delayMs = delayMs
        self.jitterMs = jitterMs
        self.bytesPerSecond = bytesPerSecond
        self.dropPercent = dropPercent
        self.sliceBytes = sliceBytes
        self.closeFrames = closeFrames
        self.seed = seed
        random = SplitMix64(seed: seed)
    }

    /// When a frame of `bytes` bytes that enters the link at `now` leaves it, never
    /// before `previous` (the departure of the frame ahead); nil when the link drops it.
    /// `bytes` is the frame's payload (0 for a close). A frame that
    /// is not `droppable` (a close) is never dropped and draws no drop.
    public mutating func departure(of bytes: Int, at now: Instant, after previous: Instant?,
                                   droppable: Bool = true) -> Instant? {
        if droppable, dropPercent > 0, Double(random.next() % 10_000) < dropPercent * 100 { return nil }
        var wait = delayMs
        if jitterMs > 0 { wait += Int64(random.next() % UInt64(2 * jitterMs + 1)) - jitterMs }
        var leaves = now.advanced(by: wait)
        if let previous, previous > leaves { leaves = previous }
        if bytesPerSecond > 0 {
            leaves = leaves.advanced(by: (Int64(bytes) * 1000 + Int64(bytesPerSecond) - 1) / Int64(bytesPerSecond))
        }
        return leaves
    }

    /// Whether the link holds or drops frames (rather than only slicing the writes).
    var holdsFrames: Bool { delayMs > 0 || jitterMs > 0 || dropPercent > 0 || bytesPerSecond > 0 }

    /// The slicing of the server's writes for an outbound link, if it slices them.
    var slicing: WriteSlicing? { sliceBytes > 0 ? WriteSlicing(sliceBytes: sliceBytes) : nil }

    var json: JSONObject {
        var object = JSONObject()
        if delayMs > 0 { object["delayMs"] = .integer(delayMs) }
        if jitterMs > 0 { object["jitterMs"] = .integer(jitterMs) }
        if bytesPerSecond > 0 { object["bytesPerSecond"] = .integer(Int64(bytesPerSecond)) }
        if dropPercent > 0 { object["dropPercent"] = .double(dropPercent) }
        if sliceBytes > 0 { object["sliceBytes"] = .integer(Int64(sliceBytes)) }
        if !closeFrames { object["closeFrame"] = false }
        object["seed"] = .integer(Int64(bitPattern: seed))
        return object
    }
}
