import ChatProtocol
import ConformanceHarness
import Foundation
import MockChatCore

/// Shrinks an input of the other ways in (a control request, a recording, a scenario
/// file, driver lines, a command line) that showed a finding, keeping each smaller
/// candidate only while `shows` says it still shows the same finding:
///
/// 1. fewer lines (a recording's entries, a driver's lines, a command line's
///    arguments): delta debugging, the fuzzers' ``Shrinker``;
/// 2. then, in each line that is JSON (a control body, an entry, a driver line): fewer
///    fields and elements, numbers closer to 0 (by powers of ten, so 1e308 takes a few
///    dozen candidates, not a thousand) and shorter strings, one change at a time.
///
/// The result is what a regression test replays (``InputRegression``).
public struct InputShrinker {
    /// Wall-clock seconds the search may take; the smallest input so far is kept.
    public var budgetSeconds: Double
    /// Candidates tried.
    public private(set) var tests = 0

    public init(budgetSeconds: Double = 30) {
        self.budgetSeconds = budgetSeconds
    }

    /// The smallest input found that still `shows` the finding (`input` itself, which
    /// must show it, when nothing smaller does).
    mutating func shrink(_ input: WireInput, shows: (WireInput) -> Bool) -> WireInput {
        let started = Stopwatch()
        var parts = InputParts(input)
        var tried = 0
        func still(_ candidate: InputParts) -> Bool {
            tried += 1
            return started.elapsedSeconds < budgetSeconds && shows(candidate.input)
        }
        if parts.lines.count > 1 {
            var shrinker = Shrinker<Int>(budgetSeconds: budgetSeconds)
            let lines = parts.lines
            let kept = shrinker.minimize(Array(lines.indices)) { candidate in
                var smaller = parts
                smaller.lines = candidate.map { lines[$0] }
                return still(smaller) ? candidate : nil
            }
            parts.lines = kept.map { lines[$0] }
        }
        var changed = true
        while changed, started.elapsedSeconds < budgetSeconds {
            changed = false
            for index in parts.lines.indices where !changed {
                for smaller in Self.simpler(parts.lines[index]) {
                    var candidate = parts
                    candidate.lines[index] = smaller
                    if still(candidate) {
                        parts = candidate
                        changed = true
                        break
                    }
                }
            }
        }
        tests += tried
        return parts.input
    }

    /// One-step simplifications of a line: of its JSON value when it is JSON, else of
    /// the number it is (a command-line argument).
    static func simpler(_ line: String) -> [String] {
        if let value = try? JSONParser.parse(Array(line.utf8)), value.objectValue != nil || value.arrayValue != nil {
            return simpler(value).map(\.description)
        }
        if let number = Double(line), number != 0 {
            return smaller(number).map { $0 == $0.rounded() && abs($0) < 1e15 ? String(Int64($0)) : "\($0)" }
        }
        return line.count > 1 ? [String(line.prefix(line.count / 2))] : []
    }

    /// Values one step simpler than `value`: a member or element removed, or one of them
    /// made simpler, at any depth.
    static func simpler(_ value: JSONValue) -> [JSONValue] {
        switch value {
        case .object(let object):
            let keys = object.keys
            let removed = keys.map { key in JSONValue.object(JSONObject(keys.filter { $0 != key }.map { ($0, object[$0]!) })) }
            let inner = keys.flatMap { key in
                simpler(object[key]!).map { member in
                    var copy = object
                    copy[key] = member
                    return JSONValue.object(copy)
                }
            }
            return removed + inner
        case .array(let items):
            let removed = items.indices.map { index in JSONValue.array(items.enumerated().filter { $0.offset != index }.map(\.element)) }
            let inner = items.indices.flatMap { index in
                simpler(items[index]).map { item in
                    var copy = items
                    copy[index] = item
                    return JSONValue.array(copy)
                }
            }
            return removed + inner
        case .string(let text):
            return text.isEmpty ? [] : [.string(""), .string(String(text.prefix(text.count / 2)))].filter { $0 != value }
        case .integer(let number):
            return number == 0 ? [] : smaller(Double(number)).compactMap { Int64(exactly: $0).map(JSONValue.integer) }
        case .double(let number):
            return number == 0 || !number.isFinite ? [] : smaller(number).map(JSONValue.double)
        default:
            return []
        }
    }

    /// Numbers nearer 0 than `number`: 0, ±1, then the power of ten halfway down and the
    /// one just below, with its sign.
    static func smaller(_ number: Double) -> [Double] {
        let magnitude = abs(number), sign: Double = number < 0 ? -1 : 1
        var candidates: [Double] = [0, sign]
        if magnitude > 10 {
            let exponent = log10(magnitude).rounded(.down)
            candidates += [sign * pow(10, (exponent / 2).rounded(.down)), sign * pow(10, exponent - 1),
                           sign * pow(10, exponent)]
        }
        return candidates.filter { abs($0) < magnitude }.reduce(into: []) { list, candidate in
            if !list.contains(candidate) { list.append(candidate) }
        }
    }
}

/// An input as the lines the shrinker works on: a control request's body (its method
/// and path kept), a recording's or a driver session's lines, a scenario file's lines,
/// a command line's arguments.
struct InputParts {
    var stage: WireInput.Stage
    var label: String
    /// Control: the request line's method and target.
    var method = "", target = ""
    var lines: [String]

    init(_ input: WireInput) {
        stage = input.stage
        label = input.label
        guard stage == .control else {
            let text = String(decoding: input.bytes, as: UTF8.self)
            lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if stage == .recording, lines.last == "" { lines.removeLast() }
            return
        }
        let bytes = input.bytes, blank: [UInt8] = [13, 10, 13, 10]
        let end = bytes.indices.first { bytes[$0...].starts(with: blank) } ?? bytes.count
        let requestLine = String(decoding: bytes[..<end], as: UTF8.self).prefix { $0 != "\r\n" }.split(separator: " ")
        method = requestLine.first.map(String.init) ?? "GET"
        target = requestLine.count > 1 ? String(requestLine[1]) : "/"
        lines = [String(decoding: bytes[min(end + 4, bytes.count)...], as: UTF8.self)]
    }

    var input: WireInput {
        if stage == .control { return ControlGenerator.request(label, method: method, path: target, body: lines.joined()) }
        return WireInput(stage: stage, label: label, bytes: Array(lines.joined(separator: "\n").utf8) + (stage == .recording ? [10] : []),
                         expectation: .reply)
    }
}
