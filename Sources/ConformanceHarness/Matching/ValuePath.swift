import ChatProtocol

/// A path into a JSON value: `user.uid`, `users[0].uid`, `users[*].status`.
///
/// `[n]` picks one element of an array; `[*]` maps the rest of the path over every
/// element and yields the list of what was found.
public struct ValuePath: Sendable, Equatable, CustomStringConvertible {
    public enum Component: Sendable, Equatable {
        case key(String)
        case index(Int)
        case every
    }

    public var components: [Component]
    public let description: String

    /// Parses `a.b[0].c` / `a[*].b`; nil when the text is not a path.
    public init?(_ text: String) {
        description = text
        components = []
        var key = ""
        var index = text.startIndex
        func flushKey() -> Bool {
            guard !key.isEmpty else { return false }
            components.append(.key(key))
            key = ""
            return true
        }
        while index < text.endIndex {
            let character = text[index]
            switch character {
            case ".":
                if !flushKey(), components.last.map({ if case .key = $0 { true } else { false } }) ?? true { return nil }
            case "[":
                _ = flushKey()
                guard !components.isEmpty, let close = text[index...].firstIndex(of: "]") else { return nil }
                let inside = text[text.index(after: index)..<close]
                if inside == "*" {
                    components.append(.every)
                } else if let number = Int(inside), number >= 0 {
                    components.append(.index(number))
                } else {
                    return nil
                }
                index = close
            case "]":
                return nil
            default:
                key.append(character)
            }
            index = text.index(after: index)
        }
        if !key.isEmpty { components.append(.key(key)) } else if text.hasSuffix(".") || text.isEmpty { return nil }
    }

    /// The first key, e.g. `users` for `users[0].uid`.
    public var head: String? {
        if case .key(let name)? = components.first { return name }
        return nil
    }

    /// The value at this path, or nil when it is absent.
    public func resolve(in value: JSONValue) -> JSONValue? {
        Self.resolve(components[...], in: value)
    }

    private static func resolve(_ rest: ArraySlice<Component>, in value: JSONValue) -> JSONValue? {
        guard let first = rest.first else { return value }
        switch first {
        case .key(let name):
            return value.objectValue?[name].flatMap { resolve(rest.dropFirst(), in: $0) }
        case .index(let position):
            guard let items = value.arrayValue, position < items.count else { return nil }
            return resolve(rest.dropFirst(), in: items[position])
        case .every:
            guard let items = value.arrayValue else { return nil }
            return .array(items.compactMap { resolve(rest.dropFirst(), in: $0) })
        }
    }
}
