import ChatProtocol
import MockChatCore

/// What the ``PresenceEngine`` asks its owner to do.
public enum EngineAction: Sendable, Equatable {
    /// Send one message to every listed connection (encoded once, written to each).
    case send([ConnectionID], ServerMessage)
    /// Close a connection with a code; the engine has already forgotten its session.
    case close(ConnectionID, CloseCode, reason: String)
    /// Call ``PresenceEngine/heartbeatDue(_:now:)`` for this connection at `at`.
    case scheduleHeartbeat(ConnectionID, at: Instant)
    /// Cluster mode: store this device in Redis and tell every node, after Redis has
    /// applied the device policy to the user's devices on every node; when
    /// `claim.refusesToKick`, answer ``PresenceEngine/clusterClaimAnswered(_:granted:now:)``.
    case claimDevice(ClusterDevice, DeviceClaim)
    /// Cluster mode: tell every node that this device is gone, the user last active at
    /// `lastActiveAt`. When the server ends the connection, the retraction carries its
    /// close, to be carried out once Redis has removed the device: a client that goes on
    /// through another node is then ordered after the removal (docs/CLUSTER.md).
    case retractDevice(ClusterDevice, lastActiveAt: Double, thenClose: ConnectionClose?)
}

/// A close the server carries out after something else: which connection, the close
/// code and the reason.
public struct ConnectionClose: Sendable, Equatable {
    public var connection: ConnectionID
    public var code: CloseCode
    public var reason: String

    public init(_ connection: ConnectionID, _ code: CloseCode, reason: String) {
        self.connection = connection
        self.code = code
        self.reason = reason
    }
}

/// One connection as the engine sees it.
public struct SessionInfo: Sendable, Equatable {
    public enum Stage: String, Sendable { case awaitingLogin = "awaiting-login", loggedIn = "logged-in" }
    public var id: ConnectionID
    public var stage: Stage
    public var uid: String?
    public var deviceId: String?
    public var platform: Platform?
    public var subscription: PresenceSubscription
    public var openedAt: Instant
    public var loggedInAt: Instant?
    public var lastInboundAt: Instant
    public var lastPingAt: Instant?

    /// Records a frame that arrived at `now`, in place (reading a session out of a
    /// dictionary would copy it). A ping is recorded only on a logged-in session.
    /// Returns the user whose activity it is, if the session has one and the frame
    /// was recorded.
    mutating func noteInbound(at now: Instant, isPing: Bool) -> String? {
        if isPing {
            guard stage == .loggedIn, uid != nil else { return nil }
            lastPingAt = now
        }
        lastInboundAt = now
        return uid
    }
}
