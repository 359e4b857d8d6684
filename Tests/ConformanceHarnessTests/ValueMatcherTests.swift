import ChatProtocol
import ConformanceHarness
import Testing

/// Paths and matchers on their own: each holds on the right value and fails on a wrong one.
@Suite struct ValueMatcherTests {
    let page: JSONValue = [
        "users": [["uid": "alice", "status": "online", "n": 1], ["uid": "bob", "status": "offline", "n": 2.0]],
        "next": .null,
    ]

    @Test func pathsIndexArraysAndMapOverThem() throws {
        #expect(try #require(ValuePath("users[0].uid")).resolve(in: page) == "alice")
        #expect(try #require(ValuePath("users[1].status")).resolve(in: page) == "offline")
        #expect(try #require(ValuePath("users[*].status")).resolve(in: page) == ["online", "offline"])
        #expect(try #require(ValuePath("users[2].uid")).resolve(in: page) == nil)
        #expect(try #require(ValuePath("next")).resolve(in: page) == .null)
        #expect(try #require(ValuePath("missing.deeper")).resolve(in: page) == nil)
        #expect(ValuePath("users[x]") == nil)
        #expect(ValuePath("users..uid") == nil)
        #expect(ValuePath("[0]") == nil)
    }

    @Test func numbersAreEqualByValueAtAnyDepth() {
        #expect(ValueMatcher.matches(.integer(0), .double(0.0)))
        #expect(ValueMatcher.matches(["a": ["b": .integer(1)]], ["a": ["b": .double(1.0)]]))
        #expect(ValueMatcher.matches([.integer(1), .double(2)], [.double(1), .integer(2)]))
        // And still unequal when the value differs.
        #expect(!ValueMatcher.matches(["a": ["b": .integer(1)]], ["a": ["b": .double(1.5)]]))
        #expect(!ValueMatcher.matches(["a": 1], ["a": 1, "b": 2]))
    }

    @Test func eachMatcherHoldsAndFails() {
        let cases: [(JSONValue?, JSONValue, Bool)] = [
            ("already connected", ["contains": "already"], true),
            ("already connected", ["contains": "never"], false),
            (["alice", "bob"], ["contains": "bob"], true),
            (["alice", "bob"], ["contains": "carol"], false),
            (["uid": "bob", "role": "admin"], ["contains": ["role": "admin"]], true),
            (["uid": "bob", "role": "admin"], ["contains": ["role": "default"]], false),
            ("Last seen 5 hour(s) ago", ["matches": "^Last seen [0-9]+ hour"], true),
            ("Last seen 5 minute(s) ago", ["matches": "^Last seen [0-9]+ hour"], false),
            (.integer(5), ["gt": 4], true), (.integer(4), ["gt": 4], false),
            (.integer(4), ["ge": 4], true), (.double(3.9), ["ge": 4], false),
            (.integer(3), ["lt": 4], true), (.integer(4), ["lt": 4], false),
            (.integer(4), ["le": 4.0], true), (.integer(5), ["le": 4], false),
            (.integer(3), ["ge": 1, "le": 5], true), (.integer(6), ["ge": 1, "le": 5], false),
            ("x", ["type": "string"], true), (.integer(1), ["type": "string"], false),
            (.integer(1), ["type": "number"], true), (.double(1.5), ["type": "integer"], false),
            (.null, ["type": "null"], true), (nil, ["type": "null"], false),
            (nil, ["absent": true], true), (.null, ["absent": true], false),
            ("x", ["absent": false], true), (nil, ["absent": false], false),
        ]
        for (actual, expected, holds) in cases {
            #expect(ValueMatcher.matches(actual, expected) == holds, "\(String(describing: actual)) vs \(expected)")
        }
    }

    @Test func malformedMatchersAreReported() {
        #expect(ValueMatcher.problems(["matches": "("]).count == 1)
        #expect(ValueMatcher.problems(["gt": "many"]) == ["gt takes a number"])
        #expect(ValueMatcher.problems(["type": "text"]).count == 1)
        #expect(ValueMatcher.problems(["absent": "yes"]) == ["absent takes true or false"])
    }
}
