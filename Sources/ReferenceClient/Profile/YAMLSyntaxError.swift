import Yams

/// What a YAML parser's error says, in the words every YAML file of the project uses
/// (profiles, scenarios): `not valid YAML: ...`, and where the parser stopped.
public struct YAMLSyntaxError {
    /// `not valid YAML: ...`, with where an open construct began.
    public let message: String
    /// Where the parser stopped, when it says.
    public let mark: Mark?

    public init(_ error: any Error) {
        switch error as? YamlError {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            let detail = context.map { "\(problem) \($0.text) (opened at \($0.mark.line):\($0.mark.column))" } ?? problem
            message = "not valid YAML: \(detail)"
            self.mark = mark
        default:
            message = "not valid YAML: \(error)"
            mark = nil
        }
    }
}
