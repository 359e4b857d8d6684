import ChatProtocol

/// What one `mockchat bench` run measured, as text for people and JSON for scripts.
///
/// A report is a list of sections, each a list of figures in a fixed order. Every
/// figure has a JSON key and value and a label and unit for the text form, so the two
/// forms always agree.
public struct BenchReport: Sendable {
    /// One measured or configured value.
    public struct Figure: Sendable {
        public var key: String
        public var value: JSONValue
        public var label: String
        public var unit: String

        public init(_ key: String, _ value: JSONValue, _ label: String, unit: String = "") {
            self.key = key
            self.value = value
            self.label = label
            self.unit = unit
        }
    }

    /// A titled group of figures; `key` names it in the JSON.
    public struct Section: Sendable {
        public var key: String
        public var title: String
        public var figures: [Figure]

        public init(_ key: String, _ title: String, _ figures: [Figure]) {
            self.key = key
            self.title = title
            self.figures = figures
        }
    }

    public var mode: String
    public var sections: [Section]
    /// Remarks a reader needs, such as limits that were reached.
    public var notes: [String]
    /// False when the run itself broke (not when it was slow): the exit status follows it.
    public var completed: Bool

    public init(mode: String, sections: [Section], notes: [String] = [], completed: Bool = true) {
        self.mode = mode
        self.sections = sections
        self.notes = notes
        self.completed = completed
    }

    /// `{"mode":…, "completed":…, "<section>": {…}, "notes": [...]}`.
    public var json: JSONValue {
        var object = JSONObject([("mode", .string(mode)), ("completed", .bool(completed))])
        for section in sections {
            object[section.key] = .object(JSONObject(section.figures.map { ($0.key, $0.value) }))
        }
        object["notes"] = .array(notes.map { .string($0) })
        return .object(object)
    }

    /// The JSON as one line of text.
    public var jsonText: String { json.serialized() }

    /// An aligned, sectioned text report.
    public var text: String {
        var lines = ["mockchat bench \(mode)" + (completed ? "" : " (did not complete)")]
        let width = sections.flatMap(\.figures).map(\.label.count).max() ?? 0
        for section in sections {
            lines.append("")
            lines.append(section.title)
            for figure in section.figures {
                let padding = String(repeating: " ", count: width - figure.label.count)
                let value = Self.format(figure.value)
                lines.append("  \(figure.label)\(padding)  \(value)\(figure.unit.isEmpty || value == "-" ? "" : " " + figure.unit)")
            }
        }
        if !notes.isEmpty {
            lines.append("")
            lines.append(contentsOf: notes.map { "note: \($0)" })
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A value as people read it: thousands separated, at most three significant decimals.
    public static func format(_ value: JSONValue) -> String {
        switch value {
        case .null: return "-"
        case .integer(let number): return grouped(number)
        case .double(let number):
            if number.rounded() == number, abs(number) < 1e15 { return grouped(Int64(number)) }
            let magnitude = abs(number)
            let places = magnitude >= 100 ? 1 : magnitude >= 1 ? 2 : 3
            let rounded = BenchMath.rounded(number, places: places)
            let whole = Int64(rounded.rounded(.towardZero))
            var fraction = String(Int64((abs(rounded - Double(whole)) * pow10(places)).rounded()))
            fraction = String(repeating: "0", count: max(0, places - fraction.count)) + fraction
            return (number < 0 && whole == 0 ? "-" : "") + grouped(whole) + "." + fraction
        case .string(let text): return text
        case .bool(let flag): return flag ? "yes" : "no"
        default: return value.serialized()
        }
    }

    private static func pow10(_ places: Int) -> Double {
        var result = 1.0
        for _ in 0..<places { result *= 10 }
        return result
    }

    private static func grouped(_ number: Int64) -> String {
        let digits = String(number.magnitude)
        var out = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return (number < 0 ? "-" : "") + out
    }
}

extension JSONValue {
    /// A double rounded for the report, or null.
    static func figure(_ value: Double?, places: Int = 1) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        return .double(BenchMath.rounded(value, places: places))
    }
}
