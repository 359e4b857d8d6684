/// A JSON object that remembers the order in which its keys were inserted.
///
/// Keys are unique: inserting an existing key replaces its value in place,
/// keeping the key's original position. Equality and hashing ignore key order,
/// matching JSON's notion of an object as an unordered set of members.
public struct JSONObject: Sendable {
    struct Entry: Sendable {
        var key: String
        var value: JSONValue
    }

    /// Objects larger than this get a hash index; smaller ones use a linear scan.
    private static let indexThreshold = 12

    private var entries: [Entry] = []
    private var index: [String: Int]? = nil

    /// Creates an empty object.
    public init() {}

    /// Creates an object from key/value pairs in order; a repeated key replaces the earlier value in place.
    public init(_ pairs: [(String, JSONValue)]) {
        entries.reserveCapacity(pairs.count)
        for (key, value) in pairs { insert(key, value) }
    }

    /// Builds an object from parallel key and value slices (used by the parser).
    init(keys: ArraySlice<String>, values: ArraySlice<JSONValue>) {
        entries.reserveCapacity(keys.count)
        var v = values.startIndex
        for key in keys {
            insert(key, values[v])
            v += 1
        }
    }

    /// The value for `key`. Assigning replaces an existing value in place or appends
    /// a new key; assigning `nil` removes the key (use `.null` to store a JSON null).
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(of: key) else { return nil }
            return entries[position].value
        }
        set {
            if let newValue {
                insert(key, newValue)
            } else if let position = position(of: key) {
                entries.remove(at: position)
                rebuildIndex()
            }
        }
    }

    /// The keys in insertion order.
    public var keys: [String] { entries.map(\.key) }

    /// The number of members.
    public var count: Int { entries.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { entries.isEmpty }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        for i in entries.indices where entries[i].key == key { return i }
        return nil
    }

    private mutating func insert(_ key: String, _ value: JSONValue) {
        if let position = position(of: key) {
            entries[position].value = value
            return
        }
        entries.append(Entry(key: key, value: value))
        if index != nil {
            index![key] = entries.count - 1
        } else if entries.count > Self.indexThreshold {
            rebuildIndex()
        }
    }

    private mutating func rebuildIndex() {
        guard entries.count > Self.indexThreshold else {
            index = nil
            return
        }
        var map = [String: Int](minimumCapacity: entries.count)
        for (i, entry) in entries.enumerated() { map[entry.key] = i }
        index = map
    }
}

extension JSONObject: Sequence {
    /// Iterates over the members as `(key, value)` pairs in insertion order.
    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Entry]>

        /// The next member, or `nil` when done.
        public mutating func next() -> (key: String, value: JSONValue)? {
            guard let entry = base.next() else { return nil }
            return (entry.key, entry.value)
        }
    }

    /// Returns an iterator over the members in insertion order.
    public func makeIterator() -> Iterator { Iterator(base: entries.makeIterator()) }

    /// The exact number of members.
    public var underestimatedCount: Int { entries.count }
}

extension JSONObject: Hashable {
    /// Two objects are equal when they have the same keys mapped to equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        for (i, entry) in lhs.entries.enumerated() {
            // Fast path for the common case of identical key order.
            if rhs.entries[i].key == entry.key {
                if rhs.entries[i].value != entry.value { return false }
            } else if rhs[entry.key] != entry.value {
                return false
            }
        }
        return true
    }

    /// Hashes the members independently of their order.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for entry in entries {
            var member = Hasher()
            member.combine(entry.key)
            member.combine(entry.value)
            combined = combined &+ member.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(combined)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Creates an object from a literal, keeping the literal's key order; a repeated key replaces the earlier value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text of the object.
    public var description: String { JSONValue.object(self).serialized() }
}
