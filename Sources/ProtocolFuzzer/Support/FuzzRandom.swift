import MockChatCore

/// The fuzzer's only source of randomness: ``SplitMix64`` plus the few helpers the
/// generators need. A seed therefore decides a whole run, and a child seed taken
/// with ``fork()`` decides one history or one input on its own, so a single failing
/// history can be regenerated without replaying the ones before it.
public struct FuzzRandom: Sendable {
    private var generator: SplitMix64

    public init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
    }

    /// 64 random bits.
    public mutating func next() -> UInt64 { generator.next() }

    /// A seed for an independent child generator.
    public mutating func fork() -> UInt64 { generator.next() }

    /// A number in `0..<bound` (`bound` > 0).
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "below(0)")
        return Int(generator.next() % UInt64(bound))
    }

    /// A number in `range`.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.count)
    }

    /// True with probability `probability` (0...1).
    public mutating func chance(_ probability: Double) -> Bool {
        Double(generator.next() >> 11) / Double(UInt64(1) << 53) < probability
    }

    /// One random byte.
    public mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: generator.next()) }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in byte() }
    }

    /// One element of a non-empty array.
    public mutating func pick<Element>(_ items: [Element]) -> Element {
        items[below(items.count)]
    }

    /// One value, chosen with probability proportional to its weight; weights of 0
    /// never win. At least one weight must be positive.
    public mutating func weighted<Element>(_ items: [(Element, Int)]) -> Element {
        let total = items.reduce(0) { $0 + max(0, $1.1) }
        precondition(total > 0, "weighted choice without a positive weight")
        var roll = below(total)
        for (item, weight) in items where weight > 0 {
            if roll < weight { return item }
            roll -= weight
        }
        return items.last { $0.1 > 0 }!.0
    }
}
