import COpenSSL

/// SHA-1 through OpenSSL, the one digest the package computes: the WebSocket accept
/// value (``WebSocketAccept``) and the names Redis gives to scripts.
public enum SHA1Digest {
    /// The 20-byte digest of `text`'s UTF-8 bytes.
    public static func bytes(of text: String) -> [UInt8] {
        let input = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        input.withUnsafeBufferPointer { source in
            digest.withUnsafeMutableBufferPointer { target in
                _ = SHA1(source.baseAddress, source.count, target.baseAddress)
            }
        }
        return digest
    }

    /// The digest of `text` as 40 lowercase hexadecimal digits.
    public static func hex(of text: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var characters: [UInt8] = []
        characters.reserveCapacity(2 * Int(SHA_DIGEST_LENGTH))
        for byte in bytes(of: text) {
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
