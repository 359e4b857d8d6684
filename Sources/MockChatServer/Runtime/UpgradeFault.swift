import ChatProtocol
import EventLoop
import MockChatCore

/// How the server answers new WebSocket upgrades under the `upgrade` fault
/// (docs/PROTOCOL.md, 12.7, "Upgrades"): an HTTP status, never, or a TCP reset, for
/// every attempt, the Nth one since the fault was set, or a seeded share of them.
public struct UpgradeFault: Sendable {
    public enum Answer: Sendable, Equatable {
        /// An HTTP response with this status, an optional `Retry-After` (seconds) and body.
        case status(Int, retryAfter: Int?, body: String?)
        /// Accepted at the TCP level and never answered: the client's timeout decides.
        case never
        /// A TCP reset instead of an answer.
        case reset
    }

    public var answer: Answer
    /// Empty: upgrades are counted (per server). Otherwise logins whose uid and device
    /// it matches are, and the chosen one's connection is answered (reset or silent).
    public var selector = FaultPlan.Selector()
    /// Only the Nth attempt after the fault was set (1 is the next one).
    public var attempt: Int?
    /// Only this share of attempts, drawn from `seed`.
    public var sharePercent: Double?
    public var seed: UInt64
    /// Attempts left to answer this way; nil: until cleared.
    public var times: Int?
    /// Attempts seen since the fault was set.
    var attemptsSeen = 0
    private var random: SplitMix64

    public init(answer: Answer, attempt: Int?, sharePercent: Double?, seed: UInt64, times: Int?) {
        (self.answer, self.attempt, self.sharePercent, self.seed, self.times) = (answer, attempt, sharePercent, seed, times)
        random = SplitMix64(seed: seed)
    }

    /// Counts one attempt; whether the fault answers it. A share draws once per attempt.
    mutating func takes() -> Bool {
        attemptsSeen += 1
        if let attempt, attemptsSeen != attempt { return false }
        if let sharePercent, Double(random.next() % 10_000) >= sharePercent * 100 { return false }
        if let left = times { times = left - 1 }
        return true
    }

    /// Whether it can answer no more attempts.
    var isSpent: Bool { times == 0 || attempt.map { attemptsSeen >= $0 } == true }

    /// The response for a status answer.
    var response: HTTPResponse? {
        guard case .status(let status, let retryAfter, let body) = answer else { return nil }
        var response = body.map { HTTPResponse.text(status: status, $0) }
            ?? .json(status: status, body: #"{"error":"upgrade refused by a fault"}"#)
        if let retryAfter { response.headers.append((name: "Retry-After", value: String(retryAfter))) }
        return response
    }

    var describe: String {
        switch answer {
        case .status(let status, _, _): "answered \(status)"
        case .never: "never answered"
        case .reset: "reset"
        }
    }

    var json: JSONValue {
        var object = JSONObject()
        if !selector.isEmpty { object["selector"] = selector.json }
        switch answer {
        case .status(let status, let retryAfter, let body):
            object["status"] = .integer(Int64(status))
            if let retryAfter { object["retryAfter"] = .integer(Int64(retryAfter)) }
            if let body { object["body"] = .string(body) }
        case .never: object["answer"] = "never"
        case .reset: object["answer"] = "reset"
        }
        if let attempt { object["attempt"] = .integer(Int64(attempt)) }
        if let sharePercent { object["sharePercent"] = .double(sharePercent) }
        object["seed"] = .integer(Int64(bitPattern: seed))
        object["times"] = times.map { .integer(Int64($0)) } ?? .null
        object["attemptsSeen"] = .integer(Int64(attemptsSeen))
        return .object(object)
    }
}
