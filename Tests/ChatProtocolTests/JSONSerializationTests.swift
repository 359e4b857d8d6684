import Testing
@testable import ChatProtocol

/// SplitMix64: a tiny seeded generator so the property test is reproducible.
private struct SplitMix64 {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// Builds arbitrary JSON values (finite doubles only, since non-finite ones serialize as null).
private struct ValueGenerator {
    var rng: SplitMix64

    mutating func string() -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}",
                                      "é", "€", "\u{FFFF}", "😀", "\u{10FFFF}", "\u{D7FF}", "\u{E000}"]
        var result = String.UnicodeScalarView()
        for _ in 0..<rng.below(12) {
            if rng.below(3) == 0 {
                result.append(pool[rng.below(pool.count)])
            } else {
                // Any scalar outside the surrogate range.
                var raw = UInt32(rng.below(0x10F800))
                if raw >= 0xD800 { raw += 0x800 }
                result.append(Unicode.Scalar(raw)!)
            }
        }
        return String(result)
    }

    mutating func double() -> Double {
        switch rng.below(4) {
        case 0: return Double(rng.below(2_000_001) - 1_000_000) / 8
        case 1: return Double(Int64(bitPattern: rng.next()))
        default:
            let d = Double(bitPattern: rng.next())
            return d.isFinite ? d : 0.5
        }
    }

    mutating func value(depth: Int = 0) -> JSONValue {
        switch rng.below(depth >= 4 ? 6 : 8) {
        case 0: return .null
        case 1: return .bool(rng.below(2) == 0)
        case 2: return .integer(rng.below(2) == 0 ? Int64(rng.below(1000)) - 500 : Int64(bitPattern: rng.next()))
        case 3: return .double(double())
        case 4, 5: return .string(string())
        case 6: return .array((0..<rng.below(6)).map { _ in value(depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<rng.below(16) { object[string()] = value(depth: depth + 1) }
            return .object(object)
        }
    }
}

@Suite struct JSONSerializationTests {
    @Test func everyKindIsCompact() {
        let value: JSONValue = ["a": [1, 2.5, "x", true, false, nil, [:], []], "b": ["c": -7]]
        #expect(value.serialized() == #"{"a":[1,2.5,"x",true,false,null,{},[]],"b":{"c":-7}}"#)
        #expect(JSONValue.integer(.min).serialized() == "-9223372036854775808")
        #expect(JSONValue.integer(.max).serialized() == "9223372036854775807")
    }

    @Test func doubles() {
        #expect(JSONValue.double(1_699_900_000).serialized() == "1699900000.0")
        #expect(JSONValue.double(0.25).serialized() == "0.25")
        #expect(JSONValue.double(-3).serialized() == "-3.0")
        #expect(JSONValue.double(0.1).serialized() == "0.1")
        #expect(JSONValue.double(1e-5).serialized() == "1e-05")
        #expect(JSONValue.double(.infinity).serialized() == "null")
        #expect(JSONValue.double(-.infinity).serialized() == "null")
        #expect(JSONValue.double(.nan).serialized() == "null")
        #expect(JSONValue.array([.double(.nan), 1]).serialized() == "[null,1]")
    }

    @Test func stringEscapes() {
        let value = JSONValue.string("q\"b\\\u{08}\u{0C}\n\r\t\u{0}\u{01}\u{1F}\u{7F}/é😀")
        #expect(value.serialized() == #""q\"b\\\b\f\n\r\t\u0000\u0001\u001f"# + "\u{7F}/é😀\"")
        #expect(JSONValue.string("").serialized() == #""""#)
        #expect(JSONValue.object(["k\"\n": 1]).serialized() == #"{"k\"\n":1}"#)
    }

    @Test func serializeAppendsToBuffer() {
        var buffer = Array("prefix:".utf8)
        JSONValue.array(["é", 1]).serialize(into: &buffer)
        #expect(buffer == Array(#"prefix:["é",1]"#.utf8))
    }

    @Test func keyOrderIsInsertionOrder() {
        var object: JSONObject = ["z": 1, "a": 2]
        object["m"] = 3
        object["z"] = 9        // replaced in place
        #expect(object.keys == ["z", "a", "m"])
        #expect(JSONValue.object(object).serialized() == #"{"z":9,"a":2,"m":3}"#)
        object["a"] = nil      // removal
        object["n"] = .null    // an explicit JSON null is kept
        #expect(JSONValue.object(object).serialized() == #"{"z":9,"m":3,"n":null}"#)
        #expect(Array(object.map(\.key)) == ["z", "m", "n"])
        #expect(object.count == 3 && !object.isEmpty && JSONObject().isEmpty)
    }

    @Test func duplicateKeysInInitializers() {
        let fromPairs = JSONObject([("a", 1), ("b", 2), ("a", 3)])
        #expect(fromPairs.keys == ["a", "b"])
        #expect(fromPairs["a"] == .integer(3))
        let literal: JSONValue = ["x": 1, "y": 2, "x": 5]
        #expect(literal.serialized() == #"{"x":5,"y":2}"#)
    }

    @Test func largeObjectsKeepOrderAcrossEdits() {
        var object = JSONObject()
        for n in 0..<30 { object["k\(n)"] = .integer(Int64(n)) }
        object["k3"] = nil
        object["k20"] = "twenty"
        object["k3"] = 33
        #expect(object.keys == (0..<30).filter { $0 != 3 }.map { "k\($0)" } + ["k3"])
        #expect(object["k20"] == "twenty")
        #expect(object["k29"] == 29)
        #expect(object["missing"] == nil)
        for n in 0..<30 { object["k\(n)"] = nil }
        #expect(object.isEmpty)
    }

    @Test func objectEqualityIgnoresOrderButSerializationDoesNot() {
        let a: JSONObject = ["x": 1, "y": [true]]
        let b: JSONObject = ["y": [true], "x": 1]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([JSONValue.object(a), .object(b)]).count == 1)
        #expect(JSONValue.object(a).serialized() != JSONValue.object(b).serialized())
        #expect(a != ["x": 1, "y": [false]])
        #expect(a != ["x": 1])
        #expect(JSONValue.integer(1) != JSONValue.double(1))
    }

    @Test func accessors() {
        let value: JSONValue = ["s": "t", "i": 4, "d": 0.5, "b": true, "n": nil, "a": [1], "o": [:]]
        #expect(value["s"]?.stringValue == "t")
        #expect(value["i"]?.intValue == 4)
        #expect(value["i"]?.doubleValue == 4)
        #expect(value["d"]?.doubleValue == 0.5)
        #expect(value["d"]?.intValue == nil)
        #expect(value["b"]?.boolValue == true)
        #expect(value["n"]?.isNull == true)
        #expect(value["s"]?.isNull == false)
        #expect(value["a"]?.arrayValue == [1])
        #expect(value["o"]?.objectValue == JSONObject())
        #expect(value["missing"] == nil)
        #expect(value["a"]?["x"] == nil)
        let names = ["s", "i", "d", "b", "n", "a", "o"].compactMap { value[$0]?.typeName }
        #expect(names == ["string", "integer", "number", "boolean", "null", "array", "object"])
        #expect(value.description == value.serialized())
    }

    @Test func serializedCountIsTheSerializedLength() {
        var generator = ValueGenerator(rng: SplitMix64(state: 0xC0_057))
        let edges: [JSONValue] = [.integer(.min), .integer(.max), .integer(0), .integer(-1), .integer(10), .integer(-10),
                                  .double(.nan), .double(.infinity), .double(1e-5), .double(-0.0), .string(""),
                                  .string("q\"b\\\u{08}\u{0C}\n\r\t\u{0}\u{1F}\u{7F}é😀"), [], [:], [[:]], nil, true, false]
        for value in edges + (0..<400).map({ _ in generator.value() }) {
            var bytes: [UInt8] = []
            value.serialize(into: &bytes)
            #expect(value.serializedCount == bytes.count, "\(value)")
        }
    }

    @Test func roundTripProperty() throws {
        var generator = ValueGenerator(rng: SplitMix64(state: 0x5EED_0F_C0DEC))
        var kinds = Set<String>()
        for _ in 0..<400 {
            let value = generator.value()
            kinds.insert(value.typeName)
            let text = value.serialized()
            let parsed = try JSONParser.parse(text, maxDepth: 8)
            #expect(parsed == value, "round trip changed \(text)")
            // Deterministic and stable: re-serializing yields identical bytes.
            #expect(parsed.serialized() == text)
            var bytes: [UInt8] = []
            value.serialize(into: &bytes)
            #expect(bytes == Array(text.utf8))
        }
        #expect(kinds.count == 7)
    }
}
