import ChatProtocol
import ReferenceClient

/// What one scenario client had observed after a step, in the form of the scenario
/// assertions that check it (docs/SCENARIOS.md, "Assertions"). `mockchat fuzz --sdk`
/// records these from the reference model and writes them as the expectations an SDK
/// must meet.
public struct ClientRecord: Sendable, Equatable {
    /// One presence event a user listener received.
    public struct PresenceEvent: Sendable, Equatable, Hashable {
        /// `online` or `offline`.
        public var change: String
        public var uid: String
        public var listener: String
        /// Scenario seconds.
        public var at: Double
        /// The user object's `lastActiveAt` (Unix seconds).
        public var lastActiveAt: Double
        /// The user object's blocking flags, from the receiver's side (004, user object).
        public var hasBlockedMe = false
        public var blockedByMe = false
    }

    /// `connected`, `connecting`, `disconnected` or `kicked`.
    public var status: String
    public var backgroundTaskEnabled: Bool
    public var loggedInUser: String?
    public var connectionEvents: [String]
    /// For each connection listener id that was called, the events it was called with.
    public var listenerCalls: [String: [String]] = [:]
    /// Scenario seconds of each socket opening (`connectAttempts`).
    public var attempts: [Double]
    public var presence: [PresenceEvent]
    /// The ids of the rule-book rules the reference model applied so far, input by
    /// input (repeated when applied again); empty for a driven client.
    public var citedRules: [String] = []
    /// The last call's outcome as a `result:` assertion (`{ok: true, ...}` or
    /// `{error: CODE}`); nil before the first call and while it is pending.
    public var lastResult: JSONValue?

    /// A call's outcome as a `result:` assertion: the error code, or success with the
    /// value's identifying part (a user's uid, status and lastActiveAt, a page's uids
    /// and cursor).
    public static func assertion(_ result: CallResult) -> JSONValue {
        switch result {
        case .failure(let error):
            return ["error": .string(error.code)]
        case .success(.none):
            return ["ok": true]
        case .success(.user(let user)):
            var fields = JSONObject([("uid", .string(user.uid)), ("status", .string(user.status.rawValue)),
                                     ("lastActiveAt", .double(user.lastActiveAt))])
            // The blocking flags, when the server sent them (a manual-mode login's user has none yet).
            for flag in ["hasBlockedMe", "blockedByMe"] { fields[flag] = user.asReceived.value?[flag] }
            return ["ok": true, "user": .object(fields)]
        case .success(.users(let page)):
            return ["ok": true, "uids": .array(page.users.map { .string($0.uid) }),
                    "next": page.next.map { .string($0) } ?? .null]
        case .success(.status(let status)):
            return ["ok": true, "status": .string(status.rawValue)]
        case .success(.flag(let flag)):
            return ["ok": true, "flag": .bool(flag)]
        }
    }
}
