/// Shell-style matching of scenario ids: `*` any run of characters, `?` one character.
public enum Glob {
    public static func matches(_ text: String, pattern: String) -> Bool {
        let text = Array(text), pattern = Array(pattern)
        var t = 0, p = 0, starP = -1, starT = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "?" || pattern[p] == text[t] {
                t += 1; p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                starP = p; starT = t; p += 1
            } else if starP >= 0 {
                p = starP + 1; starT += 1; t = starT
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
