/// What a connection under latency (``TCPConnection/latencyMs``) holds back in one
/// direction: bytes and stream events, in order, each with the time it crosses.
struct DelayedTraffic {
    enum Item {
        case bytes([UInt8])
        /// The peer's end of stream (nil) or failure.
        case end(UVError?)
        /// A close this side asked for.
        case close(SilencedTraffic.Close)
    }

    var items: [(crosses: Instant, item: Item)] = []
    /// Fires when the first item crosses.
    var timer: Clock.TimerID?

    /// The bytes held, for the connection's unsent count.
    var byteCount: Int {
        items.reduce(0) { sum, entry in
            if case .bytes(let bytes) = entry.item { return sum + bytes.count }
            return sum
        }
    }
}

extension TCPConnection {
    /// Whether bytes from the peer are still on their way through the latency.
    public var holdsDelayedInput: Bool { !delayedIn.items.isEmpty }

    /// What the latency holds in one direction: from the peer (`inbound`) or to it.
    private static func held(inbound: Bool) -> ReferenceWritableKeyPath<TCPConnection, DelayedTraffic> {
        inbound ? \.delayedIn : \.delayedOut
    }

    /// Holds `item` until the latency has passed, behind what is ahead of it.
    func delay(_ item: DelayedTraffic.Item, inbound: Bool) {
        let latency = latencyMs ?? 0
        let direction = Self.held(inbound: inbound)
        var held = self[keyPath: direction]
        var crosses = loop.clock.now.advanced(by: latency)
        if let last = held.items.last?.crosses, last > crosses { crosses = last }
        held.items.append((crosses, item))
        if held.timer == nil { held.timer = scheduleCrossing(at: crosses, inbound: inbound) }
        self[keyPath: direction] = held
    }

    private func scheduleCrossing(at time: Instant, inbound: Bool) -> Clock.TimerID {
        loop.clock.schedule(at: time) { [weak self] in self?.crossDue(inbound: inbound) }
    }

    /// Applies, in order, the items of one direction whose time has come.
    private func crossDue(inbound: Bool) {
        let direction = Self.held(inbound: inbound)
        self[keyPath: direction].timer = nil
        let now = loop.clock.now
        while state == .open {
            guard let first = self[keyPath: direction].items.first else { return }
            guard first.crosses <= now else {
                self[keyPath: direction].timer = scheduleCrossing(at: first.crosses, inbound: inbound)
                return
            }
            self[keyPath: direction].items.removeFirst()
            cross(first.item, inbound: inbound)
        }
    }

    /// Carries out one item that has crossed the link.
    private func cross(_ item: DelayedTraffic.Item, inbound: Bool) {
        switch item {
        case .bytes(let bytes) where inbound: bytes.withUnsafeBytes { deliver($0) }
        case .bytes(let bytes): releaseUndelayed(bytes)
        case .end(let error): reportEnd(error)
        case .close(let close): closeUndelayed(close)
        }
    }

    /// Latency was switched off: what both directions hold crosses at once, in order,
    /// the server's output first.
    func releaseDelayed() {
        for inbound in [false, true] {
            let direction = Self.held(inbound: inbound)
            let held = self[keyPath: direction]
            loop.clock.cancel(held.timer)
            self[keyPath: direction] = DelayedTraffic()
            for entry in held.items where state == .open { cross(entry.item, inbound: inbound) }
        }
    }

    /// Forgets what the latency holds (the connection closes).
    func discardDelayed() {
        loop.clock.cancel(delayedIn.timer)
        loop.clock.cancel(delayedOut.timer)
        delayedIn = DelayedTraffic()
        delayedOut = DelayedTraffic()
    }

    /// Holds a close this side asked for behind the latency; false when there is none.
    func delaysClose(_ close: SilencedTraffic.Close) -> Bool {
        guard latencyMs != nil else { return false }
        flushPendingOutput()
        delay(.close(close), inbound: false)
        return true
    }
}
