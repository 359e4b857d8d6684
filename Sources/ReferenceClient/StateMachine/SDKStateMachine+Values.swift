import ChatProtocol

extension SDKStateMachine {
    /// A call made before `initialize`, with the profile's code and text.
    var notInitialized: ChatError {
        ChatError(code: profile.notInitializedError, description: profile.notInitializedDescription)
    }

    /// A second login while a user is logged in, with the profile's code.
    var alreadyLoggedIn: ChatError {
        ChatError(code: profile.alreadyLoggedInError, description: ErrorCode.alreadyLoggedIn.defaultDescription)
    }

    /// `connect()` on a connected socket, with the profile's text.
    var alreadyConnected: ChatError { ChatError(.alreadyConnected, profile.alreadyConnectedDescription) }

    /// `ping()` in auto mode, with the profile's text.
    var pingNotAvailable: ChatError { ChatError(.pingNotAvailable, profile.pingNotAvailableDescription) }

    /// Closes the socket with one of the profile's close codes (``Profile/problems`` checks
    /// that it is one), citing the rule that owns the code.
    mutating func closeSocket(_ code: UInt16, rule: String) {
        cite(rule)
        emit(.closeSocket(CloseCode(rawValue: code) ?? .normal))
    }
}
