import CLibUV

/// One reply from Redis, copied out of hiredis's memory.
public enum RedisReply: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case array([RedisReply])
    case null
    case status(String)
    case error(String)

    init(_ reply: UnsafePointer<redisReply>) {
        let value = reply.pointee
        func text() -> String {
            guard let bytes = value.str else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: bytes, count: value.len), as: UTF8.self)
        }
        switch value.type {
        case REDIS_REPLY_STRING: self = .string(text())
        case REDIS_REPLY_INTEGER: self = .integer(Int(value.integer))
        case REDIS_REPLY_ARRAY:
            self = .array((0..<value.elements).map { RedisReply(UnsafePointer(value.element[$0]!)) })
        case REDIS_REPLY_STATUS: self = .status(text())
        case REDIS_REPLY_ERROR: self = .error(text())
        default: self = .null
        }
    }

    /// The text of a string or status reply.
    public var text: String? {
        switch self {
        case .string(let text), .status(let text): text
        default: nil
        }
    }

    /// The elements of an array reply.
    public var elements: [RedisReply] {
        if case .array(let elements) = self { return elements }
        return []
    }
}
