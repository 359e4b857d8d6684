import ChatProtocol
import EventLoop
import Foundation
import MockChatTestSupport
@testable import ReferenceClient

/// The package's `Fixtures/profiles`, found from this file's location.
enum Fixtures {
    static let profilesDirectory: URL = PackagePaths.root.appendingPathComponent("Fixtures/profiles")

    static func profile(_ name: String) -> Profile {
        do {
            return try Profile.load(named: name, in: profilesDirectory)
        } catch {
            fatalError("fixture profile \(name) does not load: \(error)")
        }
    }

    static let cometChat = profile("cometchat-ios")
    static let nexconn = profile("nexconn-ios")
}

/// A state machine with its own time and call numbering, for exact action checks.
struct Rig {
    var machine: SDKStateMachine
    var now = Instant.virtualEpoch
    var nextCall = 1
    var nextRequest: Int64 = 1
    /// Whether the actions list the open deadline's timer. Off by default: every attempt
    /// arms it, and the checks of other rules read better without it
    /// (StateMachineOpenDeadlineTests checks it).
    var showsOpenDeadline = false
    /// Whether the actions list the calls' reply deadline (StateMachineCallDeadlineTests checks it).
    var showsCallDeadline = false

    init(_ profile: Profile = Fixtures.cometChat) {
        machine = SDKStateMachine(profile: profile)
    }

    private func shown(_ actions: [SDKAction]) -> [SDKAction] {
        actions.filter { action in
            switch action {
            case .scheduleTimer(.openTimeout, _), .cancelTimer(.openTimeout): showsOpenDeadline
            case .scheduleTimer(.callTimeout, _), .cancelTimer(.callTimeout): showsCallDeadline
            default: true
            }
        }
    }

    /// An API call: returns its id and the actions.
    mutating func call(_ command: SDKCommand) -> (CallID, [SDKAction]) {
        let id = CallID(nextCall)
        nextCall += 1
        return (id, shown(machine.perform(command, call: id, now: now)))
    }

    /// A lifecycle, network or relaunch input.
    mutating func env(_ command: SDKCommand) -> [SDKAction] {
        shown(machine.perform(command, now: now))
    }

    mutating func opened() -> [SDKAction] { shown(machine.socketOpened(now: now)) }
    mutating func failed(_ reason: String = "refused") -> [SDKAction] { shown(machine.socketFailed(reason, now: now)) }
    mutating func closed(_ code: UInt16?) -> [SDKAction] { shown(machine.socketClosed(receivedCode: code, now: now)) }
    mutating func receive(_ message: ServerMessage) -> [SDKAction] { shown(machine.frameReceived(message, now: now)) }

    /// Fires a timer after moving time by its delay (time only matters for stamps).
    mutating func fire(_ kind: TimerKind, afterMilliseconds delay: Int64 = 0) -> [SDKAction] {
        now = now.advanced(by: delay)
        return shown(machine.timerFired(kind, now: now))
    }

    /// The id the machine gives its next request.
    mutating func takeRequestID() -> RequestID {
        defer { nextRequest += 1 }
        return .integer(nextRequest)
    }

    static let alice = User(uid: "alice", name: "Alice", status: .online, lastActiveAt: 1_700_000_000)
    static let bob = User(uid: "bob", name: "Bob", status: .online, lastActiveAt: 1_700_000_000)

    static func loginRequest(uid: String? = "alice", key: String? = "key", settings: AppSettings = AppSettings(),
                             reconnect: Bool = false, kickEnable: Bool = false) -> Request {
        .login(LoginRequest(uid: uid, authKey: key, deviceId: settings.deviceId, platform: settings.platform,
                            presence: settings.presence, reconnect: reconnect, reconnectKickEnable: kickEnable))
    }

    /// initialize + login (auto mode) up to the connected state; request ids 1 (login) used.
    mutating func connectedAuto(_ settings: AppSettings = AppSettings()) {
        _ = call(.initialize(settings))
        _ = call(.login(uid: "alice", authKey: "key"))
        _ = opened()
        _ = receive(.loggedIn(id: takeRequestID(), user: Self.alice, connectionId: "c1", serverTime: now.seconds))
    }

    /// initialize + login + connect (manual mode) up to the connected state.
    mutating func connectedManual(_ settings: AppSettings = AppSettings(autoEstablishSocketConnection: false)) {
        _ = call(.initialize(settings))
        _ = call(.login(uid: "alice", authKey: "key"))
        _ = call(.connect)
        _ = opened()
        _ = receive(.loggedIn(id: takeRequestID(), user: Self.alice, connectionId: "c1", serverTime: now.seconds))
    }

    /// The delay of the backoff timer scheduled by `actions`, if any.
    static func backoffDelay(_ actions: [SDKAction]) -> Int64? {
        for case .scheduleTimer(.backoff, let delay) in actions { return delay }
        return nil
    }
}

extension SDKAction {
    static func event(_ event: ConnectionEvent, _ listeners: [String] = []) -> SDKAction {
        .connectionEvent(listeners: listeners, event)
    }
}
