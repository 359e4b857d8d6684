import Testing
import WireKit

@Suite("SHA-1 digest")
struct SHA1DigestTests {
    @Test func theHexDigestIsTheFIPSExample() {
        // FIPS 180-2, appendix A.1; and the empty message.
        #expect(SHA1Digest.hex(of: "abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(SHA1Digest.hex(of: "") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(SHA1Digest.bytes(of: "abc").count == 20)
    }
}
