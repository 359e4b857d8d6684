import ChatProtocol
import MockChatCore

/// A number of a scenario written in terms of the rule book's parameters
/// (docs/SPECIFICATION.md, "Parameters in scenarios"): any string that starts with `$`.
///
///     advance: $keepAliveInterval
///     at: ["$keepAliveInterval + $pongTimeout"]
///     connectAttempts: { at: [0, "$backoffTimes(10, 12)"] }
///     expect_error: $notInitializedError
///
/// `$name` alone stands for the parameter's value as it is (a number of seconds, a code,
/// a text). Arithmetic (`+ - * /`, parentheses, numbers with `ms`, `s`, `m`, `h`) works on
/// seconds. Three functions read the backoff table `reconnectBackoff`: `backoff(n)` is the
/// delay before the n-th retry, `backoffTotal(n)` the sum of the first n delays, and
/// `backoffTimes(from, n)` the times of the first n retries after a loss at `from`, a list
/// that takes its place in the list around it.
public struct ParameterExpression: Sendable {
    /// The text after `$`.
    public let text: String
    /// The parameters it reads.
    public private(set) var parameters: Set<String> = []
    private let root: Node

    indirect enum Node: Sendable {
        case number(Double)
        case parameter(String)
        case call(String, [Node])
        case binary(Character, Node, Node)
    }

    static let functions = ["backoff": 1, "backoffTotal": 1, "backoffTimes": 2]
    static let backoffTable = "reconnectBackoff"

    /// Whether `value` is written as an expression.
    public static func isExpression(_ value: JSONValue) -> Bool { value.stringValue?.hasPrefix("$") == true }

    /// Parses `$...`; throws with what is wrong.
    public init(_ written: String) throws(ScenarioError) {
        guard written.hasPrefix("$") else { throw ScenarioError("a parameter expression starts with $") }
        text = String(written.dropFirst())
        var parser = Parser(characters: Array(written))
        root = try parser.expression()
        parser.skipSpaces()
        guard parser.index == parser.characters.count else {
            throw ScenarioError("cannot read '\(written)' after '\(String(parser.characters[..<parser.index]))'")
        }
        parameters = Self.names(root)
    }

    private static func names(_ node: Node) -> Set<String> {
        switch node {
        case .number: []
        case .parameter(let name): [name]
        case .call(_, let arguments): arguments.reduce(into: [backoffTable]) { $0.formUnion(names($1)) }
        case .binary(_, let left, let right): names(left).union(names(right))
        }
    }

    /// The value with the parameters' values `lookup` gives: a JSON value, or a list of
    /// numbers for `backoffTimes` (`isList`).
    public func evaluate(_ lookup: (String) -> JSONValue?) throws(ScenarioError) -> (value: JSONValue, isList: Bool) {
        if case .parameter(let name) = root {
            guard let value = lookup(name) else { throw ScenarioError("parameter '\(name)' has no value for this profile") }
            return (value, false)
        }
        if case .call("backoffTimes", let arguments) = root {
            let from = try number(arguments[0], lookup)
            let count = try retries(try number(arguments[1], lookup), "backoffTimes(from, n)")
            let table = try Self.table(lookup)
            let times = (1...max(1, count)).map { from + table.total($0) }
            return (.array(times.map(Self.json)), true)
        }
        return (Self.json(try number(root, lookup)), false)
    }

    private func number(_ node: Node, _ lookup: (String) -> JSONValue?) throws(ScenarioError) -> Double {
        switch node {
        case .number(let value): return value
        case .parameter(let name):
            guard let value = lookup(name) else { throw ScenarioError("parameter '\(name)' has no value for this profile") }
            guard let number = value.doubleValue else { throw ScenarioError("parameter '\(name)' is \(value), not a number") }
            return number
        case .call(let name, let arguments):
            let table = try Self.table(lookup)
            let n = try retries(try number(arguments[0], lookup), "\(name)(n)")
            switch name {
            case "backoff": return table.delay(n)
            case "backoffTotal": return table.total(n)
            default: throw ScenarioError("\(name)(...) is a list; it can only stand alone in a list")
            }
        case .binary(let op, let left, let right):
            let a = try number(left, lookup), b = try number(right, lookup)
            switch op {
            case "+": return a + b
            case "-": return a - b
            case "*": return a * b
            default:
                guard b != 0 else { throw ScenarioError("division by zero in $\(text)") }
                return a / b
            }
        }
    }

    /// The most retries a backoff function counts: far more than any scenario waits for,
    /// and few enough that a list of them is quick to build.
    static let maxRetries = 10_000

    /// A retry number written as a number of seconds would be: checked before it
    /// becomes an `Int` (a count past ``maxRetries`` would trap or take minutes to list).
    private func retries(_ value: Double, _ call: String) throws(ScenarioError) -> Int {
        do throws(BoundedNumberError) {
            return try BoundedNumber.integer(value, "n in $\(text) (\(call))", in: 0...Double(Self.maxRetries), unit: "retries")
        } catch {
            throw ScenarioError(error.description)
        }
    }

    /// A number as JSON: an integer when it is whole, so that `$x` and `10` read alike.
    static func json(_ value: Double) -> JSONValue {
        let rounded = (value * 1_000_000).rounded() / 1_000_000
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? .integer(Int64(rounded)) : .double(rounded)
    }

    /// The backoff table: `steps` in turn, then `repeatEvery` (Profile.reconnectBackoff).
    struct Table {
        var steps: [Double]
        var repeatEvery: Double
        /// The delay before retry `n` (1-based).
        func delay(_ n: Int) -> Double { n >= 1 && n <= steps.count ? steps[n - 1] : repeatEvery }
        func total(_ n: Int) -> Double {
            n < 1 ? 0 : steps.prefix(n).reduce(0, +) + Double(max(0, n - steps.count)) * repeatEvery
        }
    }

    private static func table(_ lookup: (String) -> JSONValue?) throws(ScenarioError) -> Table {
        guard let value = lookup(backoffTable), let steps = value["steps"]?.arrayValue?.compactMap(\.doubleValue),
              let repeatEvery = value["repeatEvery"]?.doubleValue else {
            throw ScenarioError("parameter '\(backoffTable)' must be {steps: [seconds...], repeatEvery: seconds}")
        }
        return Table(steps: steps, repeatEvery: repeatEvery)
    }

    /// Recursive descent over `+ -`, `* /`, and numbers, names, calls and parentheses.
    private struct Parser {
        let characters: [Character]
        var index = 1

        mutating func skipSpaces() { while index < characters.count, characters[index] == " " { index += 1 } }

        mutating func expression() throws(ScenarioError) -> Node {
            var node = try term()
            while true {
                skipSpaces()
                guard index < characters.count, "+-".contains(characters[index]) else { return node }
                let op = characters[index]
                index += 1
                node = .binary(op, node, try term())
            }
        }

        mutating func term() throws(ScenarioError) -> Node {
            var node = try factor()
            while true {
                skipSpaces()
                guard index < characters.count, "*/".contains(characters[index]) else { return node }
                let op = characters[index]
                index += 1
                node = .binary(op, node, try factor())
            }
        }

        mutating func factor() throws(ScenarioError) -> Node {
            skipSpaces()
            guard index < characters.count else { throw ScenarioError("'\(String(characters))' ends too early") }
            let first = characters[index]
            if first == "(" {
                index += 1
                let node = try expression()
                skipSpaces()
                guard index < characters.count, characters[index] == ")" else { throw ScenarioError("missing ')' in '\(String(characters))'") }
                index += 1
                return node
            }
            if first.isNumber || first == "." { return try number() }
            if first == "$" { index += 1 }
            let start = index
            while index < characters.count, characters[index].isLetter || characters[index].isNumber { index += 1 }
            let name = String(characters[start..<index])
            guard !name.isEmpty else { throw ScenarioError("expected a number or a parameter name in '\(String(characters))'") }
            skipSpaces()
            guard index < characters.count, characters[index] == "(" else { return .parameter(name) }
            guard let arity = ParameterExpression.functions[name] else {
                throw ScenarioError("unknown function '\(name)'" + Suggestion.hint(for: name, among: ParameterExpression.functions.keys.sorted()))
            }
            index += 1
            var arguments: [Node] = []
            while true {
                arguments.append(try expression())
                skipSpaces()
                guard index < characters.count else { throw ScenarioError("missing ')' in '\(String(characters))'") }
                index += 1
                if characters[index - 1] == ")" { break }
                guard characters[index - 1] == "," else { throw ScenarioError("expected ',' or ')' in '\(String(characters))'") }
            }
            guard arguments.count == arity else { throw ScenarioError("\(name) takes \(arity) argument\(arity == 1 ? "" : "s")") }
            return .call(name, arguments)
        }

        mutating func number() throws(ScenarioError) -> Node {
            let start = index
            while index < characters.count, characters[index].isNumber || characters[index] == "." { index += 1 }
            guard let value = Double(String(characters[start..<index])) else { throw ScenarioError("cannot read a number in '\(String(characters))'") }
            let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
            for (suffix, scale) in units where characters[index...].starts(with: suffix)
                && !(characters.indices.contains(index + suffix.count) && characters[index + suffix.count].isLetter) {
                index += suffix.count
                return .number(value * scale)
            }
            return .number(value)
        }
    }
}
