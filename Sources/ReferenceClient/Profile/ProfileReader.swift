import Yams

/// Turns a profile file's YAML into a ``Profile``. A file that does not fit says in plain
/// words which field is wrong, what it must be and where it is written, e.g.
/// `cometchat-ios.yaml:9:20: 'keepAliveInterval' must be a number, found "abc"`.
struct ProfileReader {
    /// The file name, for messages.
    let origin: String

    func read(_ yaml: String) throws(ProfileError) -> Profile {
        let root: Node
        do {
            // The resolver `YAMLDecoder` parses text with.
            root = try Yams.compose(yaml: yaml, .basic.appending(.merge)) ?? ""
        } catch {
            throw syntaxError(error)
        }
        do {
            return try YAMLDecoder().decode(Profile.self, from: root)
        } catch let error as DecodingError {
            throw explanation(of: error, in: root)
        } catch {
            throw ProfileError(origin: origin, problems: ["not a valid profile: \(error)"])
        }
    }

    private func syntaxError(_ error: any Error) -> ProfileError {
        let syntax = YAMLSyntaxError(error)
        return ProfileError(origin: origin, problems: [syntax.message], at: syntax.mark)
    }

    private func explanation(of error: DecodingError, in root: Node) -> ProfileError {
        switch error {
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let located = root.nearest(context.codingPath)
            let found = located.isExact ? Self.describe(located.node) : "nothing"
            return ProfileError(origin: origin, problems: [
                "\(Self.name(context.codingPath)) must be \(Self.expectation(type)), found \(found)",
            ], at: located.node.mark)
        case .keyNotFound(let key, let context):
            return ProfileError(origin: origin, problems: [
                "missing required field '\(Self.path(context.codingPath + [key]))'",
            ], at: root.nearest(context.codingPath).node.mark)
        case .dataCorrupted(let context):
            return ProfileError(origin: origin, problems: [
                "\(Self.name(context.codingPath)): \(context.debugDescription)",
            ], at: root.nearest(context.codingPath).node.mark)
        @unknown default:
            return ProfileError(origin: origin, problems: ["not a valid profile: \(error)"])
        }
    }

    /// `'reconnectBackoff.steps[2]'`, or `the profile` for the whole file.
    private static func name(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? "the profile" : "'\(path(codingPath))'"
    }

    /// `reconnectBackoff.steps[2]`.
    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.reduce(into: "") { text, key in
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
    }

    /// What a value of `type` is written as.
    private static func expectation(_ type: Any.Type) -> String {
        switch type {
        case is Double.Type, is Int.Type: "a number"
        case is Bool.Type: "true or false"
        case is String.Type, is Node.Scalar.Type: "a single value"
        case is Node.Sequence.Type: "a list"
        case is Node.Mapping.Type: "a mapping of fields"
        case let choice as any ProfileChoice.Type: "one of " + choice.names.map { "'\($0)'" }.joined(separator: ", ")
        default: "a \(type)"
        }
    }

    private static func describe(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar): scalar.string.isEmpty ? "nothing" : "\"\(scalar.string)\""
        case .sequence: "a list"
        case .mapping: "a mapping"
        case .alias: "an alias"
        }
    }
}

/// A profile field written as one of a fixed set of names. A name not in the set is a
/// type mismatch, so the error can list the names.
protocol ProfileChoice: CaseIterable, RawRepresentable<String> {}

extension ProfileChoice {
    static var names: [String] { allCases.map(\.rawValue) }

    /// Decodes one of the names.
    static func decode(from decoder: any Decoder) throws -> Self {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(rawValue: name) else {
            throw DecodingError.typeMismatch(Self.self, .init(codingPath: decoder.codingPath,
                                                              debugDescription: "'\(name)' is not one of \(names)"))
        }
        return value
    }
}

private extension Node {
    /// The node at `codingPath`, or its nearest ancestor when the path goes further than the file.
    func nearest(_ codingPath: [any CodingKey]) -> (node: Node, isExact: Bool) {
        var node = self
        for key in codingPath {
            let child: Node? = if let index = key.intValue, let items = node.sequence {
                index < items.count ? items[index] : nil
            } else {
                node.mapping?[key.stringValue]
            }
            guard let child else { return (node, false) }
            node = child
        }
        return (node, true)
    }
}

private extension ProfileError {
    init(origin: String, problems: [String], at mark: Mark?) {
        self.init(origin: origin, problems: problems,
                  location: mark.map { Location(line: $0.line, column: $0.column) })
    }
}
