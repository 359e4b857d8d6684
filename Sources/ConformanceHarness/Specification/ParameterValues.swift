import ChatProtocol

/// The values a run gives the rule book's parameters: an SDK's declared ones (its
/// manifest) over MockChat's defaults for the profile. Turns a scenario's `$...`
/// expressions into plain numbers, codes and texts.
public struct ParameterValues: Sendable {
    public let ruleBook: RuleBook
    public let profile: String
    /// Values the SDK declared, by parameter name.
    public let declared: [String: JSONValue]

    public init(ruleBook: RuleBook = .embedded, profile: String, declared: [String: JSONValue] = [:]) {
        self.ruleBook = ruleBook
        self.profile = profile
        self.declared = declared
    }

    /// The value of `name`: the declared one, else the default for the profile.
    public func value(_ name: String) -> JSONValue? {
        declared[name] ?? ruleBook.parameterRule(name)?.parameter?.defaultValue(profile: profile)
    }

    /// `raw` with every `$...` string replaced by its value (a list from `backoffTimes`
    /// takes its place in the list around it), and the names of the parameters it read.
    /// `fail` places an error at the path (in the document) of the value that caused it.
    func substitute(_ raw: JSONValue, path: [String],
                    fail: (String, [String]) -> ScenarioError) throws(ScenarioError) -> (value: JSONValue, parameters: Set<String>) {
        var used: Set<String> = []
        func walk(_ value: JSONValue, _ path: [String]) throws(ScenarioError) -> [JSONValue] {
            switch value {
            case .string(let text) where text.hasPrefix("$"):
                let expression: ParameterExpression
                do { expression = try ParameterExpression(text) } catch { throw fail(error.message, path) }
                for name in expression.parameters.sorted() where ruleBook.parameterRule(name) == nil {
                    throw fail("unknown parameter '\(name)'" + Suggestion.hint(for: name, among: ruleBook.parameterNames)
                               + "; parameters are the rule book's (Fixtures/spec)", path)
                }
                used.formUnion(expression.parameters)
                do {
                    let (result, isList) = try expression.evaluate(value(_:))
                    return isList ? (result.arrayValue ?? []) : [result]
                } catch {
                    throw fail("\(text): \(error.message)", path)
                }
            case .array(let items):
                var out: [JSONValue] = []
                for (index, item) in items.enumerated() { out += try walk(item, path + [String(index)]) }
                return [.array(out)]
            case .object(let object):
                var out = JSONObject()
                for (key, item) in object {
                    let replaced = try walk(item, path + [key])
                    guard replaced.count == 1 else { throw fail("a list expression stands only inside a list", path + [key]) }
                    out[key] = replaced[0]
                }
                return [.object(out)]
            default:
                return [value]
            }
        }
        let result = try walk(raw, path)
        guard result.count == 1 else { throw fail("a list expression stands only inside a list", path) }
        return (result[0], used)
    }
}
