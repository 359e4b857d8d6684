/// "Did you mean" for misspelt names: the closest known name by edit distance.
public enum Suggestion {
    /// `" (did you mean 'x'?)"`, or the list of known names when none is close.
    public static func hint(for name: String, among known: [String]) -> String {
        if let best = closest(to: name, among: known) { return " (did you mean '\(best)'?)" }
        return known.isEmpty ? "" : " (known: \(known.joined(separator: ", ")))"
    }

    /// The known name closest to `name`, when it is within a third of its length.
    public static func closest(to name: String, among known: [String]) -> String? {
        let lowered = name.lowercased()
        let scored = known.map { ($0, distance(lowered, $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, name.count / 3) ? best.0 : nil
    }

    /// Levenshtein distance.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(1, b.count) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
