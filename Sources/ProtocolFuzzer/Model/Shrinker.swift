import Dispatch

/// Delta debugging (Zeller and Hildebrandt's ddmin) over a list of steps.
///
/// `test` runs a candidate and answers whether it still fails the same way; when it
/// does, it may return a shorter list that still fails (for a history: the
/// candidate cut after the step that failed), which replaces the candidate. The
/// result is 1-minimal when the budget allows: removing any single remaining step
/// makes the failure go away.
public struct Shrinker<Element: Sendable>: Sendable {
    /// Wall-clock seconds the search may take; the best list so far is returned
    /// when they are spent.
    public var budgetSeconds: Double
    /// Candidates tried so far.
    public private(set) var tests = 0

    public init(budgetSeconds: Double = 120) {
        self.budgetSeconds = budgetSeconds
    }

    /// Shrinks `failing`, which must fail (it is not tested again).
    public mutating func minimize(_ failing: [Element], test: ([Element]) -> [Element]?) -> [Element] {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(budgetSeconds * 1e9)
        var current = failing
        var granularity = 2
        while current.count >= 2, DispatchTime.now().uptimeNanoseconds < deadline {
            let chunks = Self.split(current.count, into: min(granularity, current.count))
            var reduced = false
            // Try each chunk alone first (a big cut), then each complement.
            if granularity > 2 || current.count == 2 {
                for chunk in chunks where chunk.count < current.count {
                    tests += 1
                    if let smaller = test(Array(current[chunk])) {
                        current = smaller
                        granularity = 2
                        reduced = true
                        break
                    }
                }
            }
            if !reduced {
                for chunk in chunks {
                    guard DispatchTime.now().uptimeNanoseconds < deadline else { break }
                    var candidate = current
                    candidate.removeSubrange(chunk)
                    guard !candidate.isEmpty else { continue }
                    tests += 1
                    if let smaller = test(candidate) {
                        current = smaller
                        granularity = max(granularity - 1, 2)
                        reduced = true
                        break
                    }
                }
            }
            if !reduced {
                guard granularity < current.count else { break }
                granularity = min(granularity * 2, current.count)
            }
        }
        return current
    }

    /// `count` indices split into `parts` contiguous ranges of near-equal size.
    static func split(_ count: Int, into parts: Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        for part in 0..<parts {
            let end = start + (count - start) / (parts - part)
            if end > start { ranges.append(start..<end) }
            start = end
        }
        return ranges
    }
}
