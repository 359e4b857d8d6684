import ChatProtocol

extension FaultRequest {
    /// An `upgrade` body (docs/PROTOCOL.md, 12.7, "Upgrades"), checked whole; nil when
    /// it turns the fault off.
    static func upgrade(_ body: JSONValue, selector: FaultPlan.Selector, enabled: Bool) throws(ControlError) -> UpgradeFault? {
        guard enabled else { return nil }
        let answer: UpgradeFault.Answer
        switch (body["status"], body["answer"]) {
        case (.some, nil) where !selector.isEmpty:
            throw ControlError(400, "'status' answers the HTTP upgrade, but with 'uid' or 'deviceId' the attempt is known only at its login, after the upgrade: use 'answer' reset or never")
        case (.some, nil):
            let status = try integer(body, "status", in: 400...599)!
            let retryAfter = try integer(body, "retryAfter", in: 0...86_400).map(Int.init)
            var text: String?
            if let value = body["body"] {
                guard let string = value.stringValue, string.utf8.count <= 4_096 else {
                    throw ControlError(400, "'body' must be a string of at most 4096 bytes")
                }
                text = string
            }
            answer = .status(Int(status), retryAfter: retryAfter, body: text)
        case (nil, .some(let value)):
            switch value.stringValue {
            case "never": answer = .never
            case "reset": answer = .reset
            default: throw ControlError(400, "'answer' is \"never\" (accepted, never answered) or \"reset\" (a TCP reset)")
            }
            for key in ["retryAfter", "body"] where body[key] != nil {
                throw ControlError(400, "'\(key)' goes with 'status': an answer of \(value.stringValue ?? "?") has no HTTP response")
            }
        default:
            throw ControlError(400, "upgrade needs exactly one of 'status' (400-599) and 'answer' (\"never\" or \"reset\")")
        }
        let attempt = try integer(body, "attempt", in: 1...1_000_000).map(Int.init)
        let share = body["sharePercent"] == nil ? nil : try dropPercent(body, "sharePercent")
        if attempt != nil, share != nil {
            throw ControlError(400, "upgrade takes 'attempt' or 'sharePercent', not both")
        }
        let times = try integer(body, "times", in: 1...1_000_000).map(Int.init)
        var fault = UpgradeFault(answer: answer, attempt: attempt, sharePercent: share, seed: try seed(body), times: times)
        fault.selector = selector
        return fault
    }
}
