import ChatProtocol

/// A disagreement between the server and the reference model.
public struct Divergence: Sendable, Equatable {
    /// What disagreed, without names: the check group and the assertion, such as
    /// `presence wire.frames` or `state server.online`, or `action ping` when an
    /// action itself could not be carried out. Shrinking keeps only candidates that
    /// fail with the same signature.
    public var signature: String
    /// The runner's message: the step, what was expected and what was found.
    public var message: String
    /// Index of the action after which it showed.
    public var action: Int
    /// The failing scenario step (1-based).
    public var step: Int

    /// The signature of a failure message: the group of the failing `expect` step, the
    /// `SUBJECT.PROPERTY` of its `expected:` line with wire names left out, and for
    /// frame patterns the kinds they count (`event=user.offline`), uids left out.
    static func signature(of message: String, check: ReferenceModel.CheckGroup?, action: FuzzAction) -> String {
        guard let check else { return "action \(action.kindName)" }
        for line in message.split(separator: "\n") where line.hasPrefix("expected: ") {
            let assertion = line.dropFirst("expected: ".count)
            let key = assertion.prefix { $0 != ":" }
            guard let dot = key.firstIndex(of: "."), key[..<dot] != "server" else { return "\(check.rawValue) \(key)" }
            var signature = "\(check.rawValue) wire\(key[dot...])"
            let valueText = assertion.dropFirst(key.count + 1).drop { $0 == " " }
            if let value = try? JSONParser.parse(String(valueText)) {
                var kinds: Set<String> = []
                for pattern in value.arrayValue ?? [value] {
                    for (field, expected) in pattern.objectValue ?? [:] where !["count", "user.uid", "result.user.uid"].contains(field) {
                        kinds.insert("\(field)=\(expected.stringValue ?? expected.description)")
                    }
                }
                if !kinds.isEmpty { signature += " [" + kinds.sorted().joined(separator: ", ") + "]" }
            }
            return signature
        }
        return check.rawValue
    }
}
