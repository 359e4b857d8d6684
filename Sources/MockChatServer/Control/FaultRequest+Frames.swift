import ChatProtocol

extension FaultRequest {
    /// A `link` body with `frames`: a link for chosen frames only (docs/PROTOCOL.md,
    /// 12.7, "Selected frames"), checked whole.
    static func selectedLink(_ body: JSONValue, selector: FaultPlan.Selector,
                             enabled: Bool) throws(ControlError) -> SelectedLink {
        let choice = "'frames' takes one of 'reply' (an op), 'event' (an event name) or 'op' (a request's op), as a non-empty string"
        guard let object = body["frames"]?.objectValue, object.count == 1, let key = object.keys.first,
              let name = object[key]?.stringValue, !name.isEmpty else { throw ControlError(400, choice) }
        let frames: SelectedLink.Frames
        switch key {
        case "reply": frames = .reply(name)
        case "event": frames = .event(name)
        case "op": frames = .request(name)
        default: throw ControlError(400, choice)
        }
        if let direction = body["direction"], direction.stringValue != frames.direction.rawValue {
            throw ControlError(400, "'frames.\(key)' picks frames going \(frames.direction.rawValue): it needs \"direction\": \"\(frames.direction.rawValue)\" or none")
        }
        for key in ["bytesPerSecond", "sliceBytes", "closeFrame"] where body[key] != nil {
            throw ControlError(400, "'\(key)' shapes a whole link, not chosen frames: leave out 'frames'")
        }
        let delay = try integer(body, "delayMs", in: 0...3_600_000) ?? 0
        let jitter = try integer(body, "jitterMs", in: 0...3_600_000) ?? 0
        guard jitter <= delay else {
            throw ControlError(400, "'jitterMs' (\(jitter)) must not exceed 'delayMs' (\(delay)): a frame cannot leave before it was sent")
        }
        let percent = try dropPercent(body)
        let seed = try seed(body)
        let hold = try flag(body, "hold")
        let duplicate = try flag(body, "duplicate")
        let times = try integer(body, "times", in: 1...1_000_000).map(Int.init)
        if enabled, delay == 0, percent == 0, !hold, !duplicate {
            throw ControlError(400, "link with 'frames' needs at least one of 'delayMs', 'dropPercent', 'hold', 'duplicate' (or \"enabled\": false)")
        }
        return SelectedLink(selector: selector, frames: frames,
                            shape: LinkShape(delayMs: delay, jitterMs: jitter, dropPercent: percent, seed: seed),
                            hold: hold, duplicate: duplicate, times: times)
    }

    private static func flag(_ body: JSONValue, _ key: String) throws(ControlError) -> Bool {
        guard let value = body[key] else { return false }
        guard let flag = value.boolValue else { throw ControlError(400, "'\(key)' must be true or false") }
        return flag
    }
}
