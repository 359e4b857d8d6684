import ChatProtocol

/// What a server text frame is, as far as the generator cares.
///
/// The shapes the servers send are compact and fixed (`{"id":7,"result":...}`,
/// `{"event":"user.online","user":{"uid":"u1",...}}`), so the common cases are
/// recognised by their first bytes without building a JSON tree. Anything else is
/// parsed properly, so a server that orders keys differently is still understood.
public enum ServerFrameKind: Equatable, Sendable {
    /// A reply; `ok` is false for an `error` reply. Non-integer ids are `nil`.
    case reply(id: Int64?, ok: Bool)
    /// `user.online` (`online` true) or `user.offline` about `uid`.
    case presence(online: Bool, uid: String)
    /// Another event, e.g. `device.kicked`.
    case event(String)
    /// Not JSON, or not a shape the protocol defines.
    case unknown

    private static let idPrefix = Array(#"{"id":"#.utf8)
    private static let resultMarker = Array(#","result""#.utf8)
    private static let onlinePrefix = Array(#"{"event":"user.online","user":{"uid":""#.utf8)
    private static let offlinePrefix = Array(#"{"event":"user.offline","user":{"uid":""#.utf8)
    private static let errorMarker = Array(#","error""#.utf8)

    /// Classifies one text frame.
    public init(_ payload: UnsafeRawBufferPointer) {
        if let fast = Self.fastPath(payload) {
            self = fast
            return
        }
        guard let value = try? JSONParser.parse(payload), let object = value.objectValue else {
            self = .unknown
            return
        }
        if let event = object["event"]?.stringValue {
            if event == "user.online" || event == "user.offline", let uid = object["user"]?["uid"]?.stringValue {
                self = .presence(online: event == "user.online", uid: uid)
            } else {
                self = .event(event)
            }
        } else if object["result"] != nil || object["error"] != nil {
            self = .reply(id: object["id"]?.intValue, ok: object["result"] != nil)
        } else {
            self = .unknown
        }
    }

    private static func fastPath(_ payload: UnsafeRawBufferPointer) -> ServerFrameKind? {
        if starts(payload, with: idPrefix) {
            var index = idPrefix.count
            var negative = false
            if index < payload.count, payload[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            var value: Int64 = 0
            var digits = 0
            while index < payload.count, payload[index] >= 48, payload[index] <= 57, digits < 18 {
                value = value * 10 + Int64(payload[index] - 48)
                index += 1
                digits += 1
            }
            guard digits > 0 else { return nil }
            let ok = starts(payload, with: resultMarker, at: index)
            guard ok || starts(payload, with: errorMarker, at: index) else { return nil }
            return .reply(id: negative ? -value : value, ok: ok)
        }
        let online = starts(payload, with: onlinePrefix)
        if online || starts(payload, with: offlinePrefix) {
            let prefix = online ? onlinePrefix : offlinePrefix
            var end = prefix.count
            while end < payload.count, payload[end] != UInt8(ascii: "\"") {
                if payload[end] == UInt8(ascii: "\\") { return nil }
                end += 1
            }
            guard end < payload.count else { return nil }
            return .presence(online: online, uid: String(decoding: payload[prefix.count..<end], as: UTF8.self))
        }
        return nil
    }

    private static func starts(_ payload: UnsafeRawBufferPointer, with prefix: [UInt8], at offset: Int = 0) -> Bool {
        guard payload.count - offset >= prefix.count else { return false }
        for index in 0..<prefix.count where payload[offset + index] != prefix[index] { return false }
        return true
    }
}
