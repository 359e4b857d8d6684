import Testing
@testable import ChatProtocol

/// Parses `text`, expecting exactly `kind` at `offset`.
private func expectFailure(
    _ text: String, _ kind: JSONError.Kind, at offset: Int, maxDepth: Int = JSONParser.defaultMaxDepth,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectFailure(Array(text.utf8), kind, at: offset, maxDepth: maxDepth, sourceLocation: sourceLocation)
}

/// Parses `bytes`, expecting exactly `kind` at `offset`.
private func expectFailure(
    _ bytes: [UInt8], _ kind: JSONError.Kind, at offset: Int, maxDepth: Int = JSONParser.defaultMaxDepth,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let value = try JSONParser.parse(bytes, maxDepth: maxDepth)
        Issue.record("expected \(kind) at \(offset), parsed \(value)", sourceLocation: sourceLocation)
    } catch {
        #expect(error == JSONError(kind: kind, offset: offset), sourceLocation: sourceLocation)
    }
}

private func nested(_ depth: Int) -> String {
    String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
}

@Suite struct JSONParserTests {
    @Test func scalars() throws {
        #expect(try JSONParser.parse("null") == .null)
        #expect(try JSONParser.parse("true") == .bool(true))
        #expect(try JSONParser.parse("false") == .bool(false))
        #expect(try JSONParser.parse("\"hi\"") == .string("hi"))
        #expect(try JSONParser.parse(" \t\r\n42 \n") == .integer(42))
    }

    @Test func integers() throws {
        #expect(try JSONParser.parse("0") == .integer(0))
        #expect(try JSONParser.parse("-0") == .integer(0))
        #expect(try JSONParser.parse("-17") == .integer(-17))
        #expect(try JSONParser.parse("9223372036854775807") == .integer(.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .integer(.min))
        // Just outside Int64: falls back to Double.
        #expect(try JSONParser.parse("9223372036854775808") == .double(9223372036854775808.0))
        #expect(try JSONParser.parse("-9223372036854775809") == .double(-9223372036854775809.0))
        #expect(try JSONParser.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
    }

    @Test func doubles() throws {
        #expect(try JSONParser.parse("1.5") == .double(1.5))
        #expect(try JSONParser.parse("-0.25") == .double(-0.25))
        #expect(try JSONParser.parse("1e3") == .double(1000))
        #expect(try JSONParser.parse("1E+2") == .double(100))
        #expect(try JSONParser.parse("25e-2") == .double(0.25))
        #expect(try JSONParser.parse("0.0") == .double(0))
        #expect(try JSONParser.parse("1699900000.0") == .double(1_699_900_000))
        #expect(try JSONParser.parse("1e-400") == .double(0))
    }

    @Test func containers() throws {
        let value = try JSONParser.parse(#" { "a" : [1, 2.5, "x", true, null, {}, []] , "b":{"c":false} } "#)
        #expect(value == ["a": [1, 2.5, "x", true, nil, [:], []], "b": ["c": false]])
        #expect(value["a"]?.arrayValue?.count == 7)
        #expect(value["b"]?["c"] == .bool(false))
        #expect(try JSONParser.parse("[]") == .array([]))
        #expect(try JSONParser.parse("{}") == .object(JSONObject()))
        #expect(try JSONParser.parse("[[[]],[{}]]") == [[[]], [[:]]])
    }

    @Test func allInputFormsAgree() throws {
        let text = #"{"k":["v",1]}"#
        let bytes = Array(text.utf8)
        let fromRaw = try bytes.withUnsafeBytes { raw throws(JSONError) in try JSONParser.parse(raw) }
        #expect(try JSONParser.parse(text) == fromRaw)
        #expect(try JSONParser.parse(bytes) == fromRaw)
    }

    @Test func escapes() throws {
        #expect(try JSONParser.parse(#""a\"b\\c\/d\be\ff\ng\rh\ti""#) == .string("a\"b\\c/d\u{08}e\u{0C}f\ng\rh\ti"))
        #expect(try JSONParser.parse(#""\u0041\u00e9\u20AC\u0000""#) == .string("Aé€\u{0}"))
        #expect(try JSONParser.parse(#""caf\u00e9 ok""#) == .string("café ok"))
        // Raw multi-byte UTF-8 next to escapes.
        #expect(try JSONParser.parse("\"é\\n😀€\"") == .string("é\n😀€"))
    }

    @Test func surrogatePairs() throws {
        #expect(try JSONParser.parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try JSONParser.parse(#""x\uD834\uDD1Ey""#) == .string("x𝄞y"))
        #expect(try JSONParser.parse(#""\udbff\udfff""#) == .string("\u{10FFFF}"))
    }

    @Test func keyOrderIsPreserved() throws {
        let value = try JSONParser.parse(#"{"z":1,"a":2,"m":3}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(value.serialized() == #"{"z":1,"a":2,"m":3}"#)
    }

    @Test func duplicateKeysLastValueWinsAtFirstPosition() throws {
        let value = try JSONParser.parse(#"{"a":1,"b":2,"a":3}"#)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["a"] == .integer(3))
        #expect(value.serialized() == #"{"a":3,"b":2}"#)

        // Same rule for objects large enough to use the hash index.
        let members = (0..<40).map { "\"k\($0 % 20)\":\($0)" }.joined(separator: ",")
        let big = try JSONParser.parse("{" + members + "}")
        #expect(big.objectValue?.count == 20)
        #expect(big.objectValue?.keys == (0..<20).map { "k\($0)" })
        #expect(big["k7"] == .integer(27))
    }

    @Test func rejectsTrailingCommas() {
        expectFailure("[1,2,]", .unexpectedByte(UInt8(ascii: "]")), at: 5)
        expectFailure(#"{"a":1,}"#, .unexpectedByte(UInt8(ascii: "}")), at: 7)
        expectFailure("[,]", .unexpectedByte(UInt8(ascii: ",")), at: 1)
        expectFailure("[1,,2]", .unexpectedByte(UInt8(ascii: ",")), at: 3)
    }

    @Test func unexpectedEnd() {
        expectFailure("", .unexpectedEnd, at: 0)
        expectFailure("  ", .unexpectedEnd, at: 2)
        expectFailure("[1,", .unexpectedEnd, at: 3)
        expectFailure("[1", .unexpectedEnd, at: 2)
        expectFailure(#"{"a""#, .unexpectedEnd, at: 4)
        expectFailure(#"{"a":"#, .unexpectedEnd, at: 5)
        expectFailure("\"abc", .unexpectedEnd, at: 4)
        expectFailure("\"ab\\", .unexpectedEnd, at: 4)
        expectFailure("\"\\u12", .unexpectedEnd, at: 5)
        expectFailure("tru", .unexpectedEnd, at: 3)
        expectFailure([0x22, 0xE2, 0x82], .unexpectedEnd, at: 3)
    }

    @Test func unexpectedByte() {
        expectFailure("+1", .unexpectedByte(UInt8(ascii: "+")), at: 0)
        expectFailure("NaN", .unexpectedByte(UInt8(ascii: "N")), at: 0)
        expectFailure("Infinity", .unexpectedByte(UInt8(ascii: "I")), at: 0)
        expectFailure("'a'", .unexpectedByte(UInt8(ascii: "'")), at: 0)
        expectFailure(".5", .unexpectedByte(UInt8(ascii: ".")), at: 0)
        expectFailure("/* c */ 1", .unexpectedByte(UInt8(ascii: "/")), at: 0)
        expectFailure("[1 // c\n]", .unexpectedByte(UInt8(ascii: "/")), at: 3)
        expectFailure("[1 2]", .unexpectedByte(UInt8(ascii: "2")), at: 3)
        expectFailure("{1:2}", .unexpectedByte(UInt8(ascii: "1")), at: 1)
        expectFailure(#"{"a" 1}"#, .unexpectedByte(UInt8(ascii: "1")), at: 5)
        expectFailure(#"{"a":1]"#, .unexpectedByte(UInt8(ascii: "]")), at: 6)
        expectFailure("trux", .unexpectedByte(UInt8(ascii: "x")), at: 3)
        expectFailure("nul", .unexpectedEnd, at: 3)
        expectFailure("True", .unexpectedByte(UInt8(ascii: "T")), at: 0)
        // Only space, tab, CR and LF count as whitespace.
        expectFailure("\u{0C}1", .unexpectedByte(0x0C), at: 0)
        expectFailure("[1,\u{0B}2]", .unexpectedByte(0x0B), at: 3)
        expectFailure([0xC2, 0xA0, 0x31], .unexpectedByte(0xC2), at: 0)
        // A byte-order mark is not accepted.
        expectFailure([0xEF, 0xBB, 0xBF, 0x31], .unexpectedByte(0xEF), at: 0)
        // Raw control characters inside strings.
        expectFailure("\"a\u{01}\"", .unexpectedByte(0x01), at: 2)
        expectFailure("\"a\nb\"", .unexpectedByte(0x0A), at: 2)
        expectFailure("\"\\n\tb\"", .unexpectedByte(0x09), at: 3)
    }

    @Test func errorDescription() {
        do {
            _ = try JSONParser.parse(#"{"a":1,"bc":}"#)
            Issue.record("expected failure")
        } catch {
            #expect(error.kind == .unexpectedByte(0x7D))
            #expect(error.offset == 12)
            #expect(error.description == "unexpected byte 0x7d at offset 12")
        }
        #expect(JSONError(kind: .unexpectedByte(0x05), offset: 3).description == "unexpected byte 0x05 at offset 3")
        #expect(JSONError(kind: .tooLarge(limit: 1024), offset: 0).description == "input larger than 1024 bytes at offset 0")
        #expect(JSONError(kind: .tooDeep(limit: 32), offset: 32).description == "nesting deeper than 32 levels at offset 32")
    }

    @Test func invalidNumber() {
        expectFailure("01", .invalidNumber, at: 1)
        expectFailure("-01", .invalidNumber, at: 2)
        expectFailure("[00]", .invalidNumber, at: 2)
        expectFailure("-", .invalidNumber, at: 1)
        expectFailure("-a", .invalidNumber, at: 1)
        expectFailure("-Infinity", .invalidNumber, at: 1)
        expectFailure("1.", .invalidNumber, at: 2)
        expectFailure("1.e5", .invalidNumber, at: 2)
        expectFailure("[1.]", .invalidNumber, at: 3)
        expectFailure("1e", .invalidNumber, at: 2)
        expectFailure("1e+", .invalidNumber, at: 3)
        expectFailure("1E-x", .invalidNumber, at: 3)
        // Finite literals only: values that overflow Double are rejected.
        expectFailure("[1e999]", .invalidNumber, at: 1)
        expectFailure("-1e400", .invalidNumber, at: 0)
    }

    @Test func invalidEscape() {
        expectFailure(#""a\x""#, .invalidEscape, at: 2)
        expectFailure(#""\'""#, .invalidEscape, at: 1)
        expectFailure(#""\U0041""#, .invalidEscape, at: 1)
        expectFailure(#"{"k\a":1}"#, .invalidEscape, at: 3)
    }

    @Test func invalidUnicodeEscape() {
        expectFailure(#""\u12g4""#, .invalidUnicodeEscape, at: 1)
        expectFailure(#""\ud800""#, .invalidUnicodeEscape, at: 1)
        expectFailure(#""\udc00""#, .invalidUnicodeEscape, at: 1)
        expectFailure(#""x\ud83dx""#, .invalidUnicodeEscape, at: 2)
        expectFailure(#""\ud800\u0041""#, .invalidUnicodeEscape, at: 1)
        expectFailure(#""\ud800\ud800""#, .invalidUnicodeEscape, at: 1)
        expectFailure(#""\ude00\ud83d""#, .invalidUnicodeEscape, at: 1)
        expectFailure(#""\ud800\n""#, .invalidUnicodeEscape, at: 1)
        expectFailure(#""\ud83d\udzzz""#, .invalidUnicodeEscape, at: 7)
    }

    @Test func invalidUTF8() throws {
        let q: UInt8 = 0x22
        expectFailure([q, 0xC3, 0x28, q], .invalidUTF8, at: 1)        // bad continuation
        expectFailure([q, 0x61, 0x80, q], .invalidUTF8, at: 2)        // stray continuation
        expectFailure([q, 0xC0, 0xAF, q], .invalidUTF8, at: 1)        // overlong '/'
        expectFailure([q, 0xE0, 0x80, 0xAF, q], .invalidUTF8, at: 1)  // overlong 3-byte
        expectFailure([q, 0xF0, 0x80, 0x80, 0xAF, q], .invalidUTF8, at: 1) // overlong 4-byte
        expectFailure([q, 0xED, 0xA0, 0x80, q], .invalidUTF8, at: 1)  // encoded surrogate U+D800
        expectFailure([q, 0xF4, 0x90, 0x80, 0x80, q], .invalidUTF8, at: 1) // above U+10FFFF
        expectFailure([q, 0xF5, 0x80, 0x80, 0x80, q], .invalidUTF8, at: 1)
        expectFailure([q, 0xFF, q], .invalidUTF8, at: 1)
        expectFailure([q, 0xE2, 0x82, q], .invalidUTF8, at: 1)        // truncated by the quote
        expectFailure([q, 0x5C, 0x6E, 0xE2, 0x28, 0xA1, q], .invalidUTF8, at: 3) // after an escape
        // Boundary scalars that are valid.
        #expect(try JSONParser.parse([q, 0xED, 0x9F, 0xBF, 0xEE, 0x80, 0x80, 0xF4, 0x8F, 0xBF, 0xBF, q])
            == .string("\u{D7FF}\u{E000}\u{10FFFF}"))
    }

    @Test func depthLimitIsInclusive() throws {
        let limit = JSONParser.defaultMaxDepth
        #expect(limit == 32)
        var value = try JSONParser.parse(nested(limit))
        var depth = 0
        while let inner = value.arrayValue?.first {
            depth += 1
            value = inner
        }
        #expect(depth == limit - 1)
        expectFailure(nested(limit + 1), .tooDeep(limit: limit), at: limit)

        let objects = { (n: Int) in String(repeating: #"{"a":"#, count: n) + "1" + String(repeating: "}", count: n) }
        #expect(throws: Never.self) { try JSONParser.parse(objects(limit)) }
        expectFailure(objects(limit + 1), .tooDeep(limit: limit), at: 5 * limit)

        #expect(throws: Never.self) { try JSONParser.parse("[[1]]", maxDepth: 2) }
        expectFailure("[[[1]]]", .tooDeep(limit: 2), at: 2, maxDepth: 2)
        expectFailure("[]", .tooDeep(limit: 0), at: 0, maxDepth: 0)
        #expect(try JSONParser.parse("7", maxDepth: 0) == .integer(7))
    }

    @Test func hugeNestingFailsFast() {
        let bomb = String(repeating: "[", count: 100_000)
        expectFailure(bomb, .tooDeep(limit: 32), at: 32)
        // Even with no effective limit the parser itself never recurses, so it cannot overflow the stack.
        expectFailure(bomb, .unexpectedEnd, at: 100_000, maxDepth: .max)
        expectFailure(bomb + "1}", .unexpectedByte(UInt8(ascii: "}")), at: 100_001, maxDepth: .max)
    }

    @Test func trailingData() {
        expectFailure("1 2", .trailingData, at: 2)
        expectFailure("{} x", .trailingData, at: 3)
        expectFailure("[]]", .trailingData, at: 2)
        expectFailure("null,", .trailingData, at: 4)
        expectFailure("\"a\"\"b\"", .trailingData, at: 3)
        expectFailure("0x1F", .trailingData, at: 1)
        expectFailure("1\u{0}", .trailingData, at: 1)
    }
}
