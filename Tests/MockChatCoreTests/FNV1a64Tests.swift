import MockChatCore
import Testing

@Suite struct FNV1a64Tests {
    /// The published FNV-1a 64-bit test vectors, and the same bytes given as text.
    @Test func knownVectors() {
        #expect(FNV1a64.hash("") == 0xcbf2_9ce4_8422_2325)
        #expect(FNV1a64.hash("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(FNV1a64.hash("foobar") == 0x8594_4171_f739_67e8)
        #expect(FNV1a64.hash(Array("foobar".utf8)) == FNV1a64.hash("foobar"))
        #expect(FNV1a64.hash(Array("foobar".utf8)[...]) == FNV1a64.hash("foobar"))
    }

    /// Another basis starts the same steps elsewhere.
    @Test func basisIsWhereTheHashStarts() {
        #expect(FNV1a64.hash([UInt8](), basis: 42) == 42)
        #expect(FNV1a64.hash(Array("a".utf8), basis: 1_469_598_103_934_665_603) == 0x44bd_8ad4_73cd_9906)
    }
}
