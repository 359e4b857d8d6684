import ChatProtocol
import WireKit

/// Checks the answer to one request on the session connection: exactly one reply
/// (events are ignored), the code or result the ``RequestOracle`` predicted, the id
/// carried back, and the close frame that must or must not follow (PROTOCOL.md §4,
/// §10, §11). The closing handshake itself is finished by the caller.
enum ReplyCheck {
    /// What the reply said and did.
    struct Outcome {
        var problems: [String] = []
        /// The uid a successful login logged in.
        var loggedIn: String?
        /// The server sent a close frame or ended the stream.
        var closed = false
        /// The server sent a close frame; the client owes it one back (RFC 6455 §5.5.1).
        var closeFrame = false
    }

    /// The codes of PROTOCOL.md §10.1.
    static let serverCodes: Set<String> = Set([ErrorCode.notLoggedIn, .uidNotFound, .invalidLimit, .authFailed,
                                               .userDeactivated, .alreadyLoggedIn, .reconnectKickRefused, .badRequest,
                                               .unknownOp, .invalidField, .invalidCursor].map(\.rawValue))

    static func check(_ frames: [ServerFrame], ended: Bool, prediction: RequestOracle.Prediction) -> Outcome {
        var outcome = Outcome()
        let got = FrameCheck.describe(frames)
        var replies: [JSONValue] = []
        var closeCode: UInt16?
        for frame in frames {
            switch frame.opcode {
            case 1:
                guard let value = try? JSONParser.parse(frame.payload) else {
                    outcome.problems.append("a reply that is not JSON: \(got)")
                    continue
                }
                if value["event"] == nil { replies.append(value) }
            case 8:
                closeCode = frame.closeCode
            default:
                outcome.problems.append("an unexpected frame: \(got)")
            }
        }
        outcome.closed = closeCode != nil || ended
        outcome.closeFrame = closeCode != nil
        guard replies.count == 1, let reply = replies.first else {
            outcome.problems.append("expected one reply, got \(got)")
            return outcome
        }
        let code = reply["error"]?["errorCode"]?.stringValue
        let result = reply["result"]
        switch prediction.outcome {
        case .error(let codes):
            if !(code.map(codes.contains) ?? false) { outcome.problems.append("expected \(codes.sorted()), got \(got)") }
        case .result(let op, let uid):
            if result == nil { outcome.problems.append("expected a result of \(op), got \(got)") }
            if op == "ping", result?["pong"] != true { outcome.problems.append("a ping result without pong: \(got)") }
            if let uid, result?["user"]?["uid"]?.stringValue != uid { outcome.problems.append("expected \(uid) to log in, got \(got)") }
        case .any:
            if result == nil, !(code.map(serverCodes.contains) ?? false) {
                outcome.problems.append("neither a result nor a documented error: \(got)")
            }
        }
        // The id comes back unchanged; ERR_BAD_REQUEST carries null (§2).
        if code == ErrorCode.badRequest.rawValue {
            if reply["id"] != .null { outcome.problems.append("ERR_BAD_REQUEST with a non-null id: \(got)") }
        } else if let id = prediction.id, reply["id"] != id {
            outcome.problems.append("the reply's id is \(reply["id"]?.description ?? "missing"), expected \(id)")
        }
        if let user = result?["user"]?["uid"]?.stringValue, result?["connectionId"] != nil { outcome.loggedIn = user }

        // The close that must follow, if any (§4.1, §4.2, §11).
        var required: UInt16?
        var optional = false
        switch code {
        case ErrorCode.authFailed.rawValue?, ErrorCode.userDeactivated.rawValue?: required = 4003
        case ErrorCode.reconnectKickRefused.rawValue?: required = 4004
        case ErrorCode.uidNotFound.rawValue?:
            if prediction.op == "login" { required = 4003 } else if prediction.op == nil { optional = true }
        default:
            if result?.objectValue?.isEmpty == true { required = 1000 }
        }
        if let required {
            if closeCode != required { outcome.problems.append("expected close \(required) after the reply, got \(got)") }
        } else if !optional, outcome.closed {
            outcome.problems.append("the connection was closed after a reply that keeps it open: \(got)")
        }
        return outcome
    }
}
