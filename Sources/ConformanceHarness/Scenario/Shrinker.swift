import Dispatch
import MockChatCore
import Synchronization

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
        minimize(failing, window: 1) { candidates in
            for (index, candidate) in candidates.enumerated() {
                if let smaller = test(candidate) { return (index + 1, (index, smaller)) }
            }
            return (candidates.count, nil)
        }
    }

    /// The same search with up to `parallelism` candidates tested at once. Of the
    /// candidates tested together, the first in order that fails wins, so the result
    /// is the one the sequential search gives; only the wall time differs.
    public mutating func minimize(_ failing: [Element], parallelism: Int,
                                  test: @escaping @Sendable ([Element]) -> [Element]?) -> [Element] {
        guard parallelism > 1 else { return minimize(failing, test: { test($0) }) }
        return minimize(failing, window: parallelism) { candidates in
            let results = Mutex([[Element]?](repeating: nil, count: candidates.count))
            DispatchQueue.concurrentPerform(iterations: candidates.count) { index in
                let outcome = test(candidates[index])
                results.withLock { $0[index] = outcome }
            }
            let found = results.withLock { $0 }.enumerated().first { $0.element != nil }
            return (candidates.count, found.map { ($0.offset, $0.element!) })
        }
    }

    /// ddmin over `failing`. `tryAll` tests candidates in order (up to `window` at a
    /// time) and answers how many it tested and the first that failed, if any.
    private mutating func minimize(
        _ failing: [Element], window: Int,
        tryAll: ([[Element]]) -> (tested: Int, found: (index: Int, smaller: [Element])?)
    ) -> [Element] {
        let deadline = MonotonicTime.after(seconds: budgetSeconds)
        var current = failing
        var granularity = 2
        func firstFailing(_ candidates: [[Element]]) -> (index: Int, smaller: [Element])? {
            var start = 0
            while start < candidates.count, MonotonicTime.now() < deadline {
                let end = min(start + window, candidates.count)
                let (tested, found) = tryAll(Array(candidates[start..<end]))
                tests += tested
                if let found { return (start + found.index, found.smaller) }
                start = end
            }
            return nil
        }
        while current.count >= 2, MonotonicTime.now() < deadline {
            let chunks = Self.split(current.count, into: min(granularity, current.count))
            var reduced = false
            // Try each chunk alone first (a big cut), then each complement.
            if granularity > 2 || current.count == 2 {
                let alone = chunks.filter { $0.count < current.count }.map { Array(current[$0]) }
                if let (_, smaller) = firstFailing(alone) {
                    current = smaller
                    granularity = 2
                    reduced = true
                }
            }
            if !reduced {
                let complements = chunks.map { chunk in
                    var candidate = current
                    candidate.removeSubrange(chunk)
                    return candidate
                }.filter { !$0.isEmpty }
                if let (_, smaller) = firstFailing(complements) {
                    current = smaller
                    granularity = max(granularity - 1, 2)
                    reduced = true
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
