import ChatProtocol
import WireKit

/// Checks the frames a connection received against a frame-level expectation.
enum FrameCheck {
    /// Problems with `frames` (empty when they are what `expectation` allows).
    static func check(_ frames: [ServerFrame], ended: Bool, malformed: String?,
                      against expectation: WireInput.Expectation) -> [String] {
        var problems: [String] = []
        if let malformed { problems.append("malformed frames from the server: \(malformed)") }
        let got = describe(frames)
        switch expectation {
        case .close(let codes):
            guard let last = frames.last, last.opcode == 8 else {
                problems.append("expected a close \(codes.sorted()), got \(got)\(ended ? " and the stream ended" : "")")
                break
            }
            if frames.count > 1 { problems.append("frames before the close: \(got)") }
            if let code = last.closeCode, !codes.contains(code) { problems.append("closed with \(code), expected \(codes.sorted())") }
            if !ended { problems.append("the stream stayed open after the close frame") }
        case .pong(let payload):
            if frames.count != 1 || frames[0].opcode != 10 || frames[0].payload != payload {
                problems.append("expected one pong echoing \(payload.count) bytes, got \(got)")
            }
            if ended { problems.append("the connection was closed") }
        case .nothing:
            if !frames.isEmpty { problems.append("expected no answer, got \(got)") }
            if ended { problems.append("the connection was closed") }
        case .badRequest:
            let acceptable = frames.count == 1 && frames[0].opcode == 1
                && isError(frames[0], ErrorCode.badRequest.rawValue, nullID: true)
            if !acceptable { problems.append("expected ERR_BAD_REQUEST with a null id, got \(got)") }
            if ended { problems.append("the connection was closed") }
        case .anyFrames(let codes):
            for (index, frame) in frames.enumerated() {
                switch frame.opcode {
                case 1:
                    let value = try? JSONParser.parse(frame.payload)
                    let code = value?["error"]?["errorCode"]?.stringValue
                    if value?["result"] == nil, !(code.map(ReplyCheck.serverCodes.contains) ?? false) {
                        problems.append("a text frame that is neither a result nor a documented error: \(got)")
                    }
                case 8:
                    if let code = frame.closeCode, !codes.contains(code) { problems.append("closed with \(code), expected \(codes.sorted())") }
                    if index != frames.count - 1 { problems.append("frames after the close frame: \(got)") }
                    if !ended { problems.append("the stream stayed open after the close frame") }
                case 10:
                    break
                default:
                    problems.append("an unexpected frame: \(got)")
                }
            }
            if ended, frames.last?.opcode != 8 { problems.append("the stream ended without a close frame (\(got))") }
        default:
            problems.append("no frame check for \(expectation)")
        }
        return problems
    }

    static func isError(_ frame: ServerFrame, _ code: String, nullID: Bool) -> Bool {
        guard let value = try? JSONParser.parse(frame.payload) else { return false }
        return value["error"]?["errorCode"]?.stringValue == code && (!nullID || value["id"] == .null)
    }

    /// A short description of frames for messages.
    static func describe(_ frames: [ServerFrame]) -> String {
        guard !frames.isEmpty else { return "nothing" }
        return frames.map { frame in
            switch frame.opcode {
            case 1: "text " + String(decoding: frame.payload.prefix(120), as: UTF8.self)
            case 2: "binary (\(frame.payload.count) bytes)"
            case 8: "close \(frame.closeCode ?? 0)"
            case 9: "ping"
            case 10: "pong"
            default: "opcode \(frame.opcode)"
            }
        }.joined(separator: ", ")
    }
}
