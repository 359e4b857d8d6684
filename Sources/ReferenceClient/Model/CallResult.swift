import ChatProtocol

/// Names one API call so its result can be found later.
public struct CallID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var value: Int

    public init(_ value: Int) { self.value = value }

    public static func < (a: CallID, b: CallID) -> Bool { a.value < b.value }

    public var description: String { "call#\(value)" }
}

/// How an API call ended: its success callback with a value, or its error callback.
public enum CallResult: Sendable, Equatable {
    case success(CallValue)
    case failure(ChatError)

    /// The error code when the call failed.
    public var errorCode: String? {
        if case .failure(let error) = self { return error.code }
        return nil
    }

    /// Whether the call succeeded.
    public var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    /// Shorthand for a failure with a catalogue code and its default description.
    public static func failure(_ code: ErrorCode) -> CallResult { .failure(ChatError(code)) }
}

/// The value a successful call hands back.
public enum CallValue: Sendable, Equatable {
    /// Nothing (connect, disconnect, ping, logout, listeners...).
    case none
    /// A user (login, getUser, getLoggedInUser).
    case user(User)
    /// One page of a users request.
    case users(UsersPage)
    /// `getConnectionStatus()`.
    case status(ConnectionStatus)
    /// `backgroundTaskEnabled()`.
    case flag(Bool)
}

/// One page of `fetchNext`: the users and the cursor of the following page.
public struct UsersPage: Sendable, Equatable {
    public var users: [User]
    /// `nil` when this was the last page.
    public var next: String?

    public init(users: [User], next: String?) {
        self.users = users
        self.next = next
    }
}
