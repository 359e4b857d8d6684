import ChatProtocol
import Testing
@testable import ReferenceClient

/// calls.reply-deadline: a call whose reply never comes fails at `callTimeout` with
/// ERR_WEBSOCKET_ERROR, and the connection stays (RocketChat/Rocket.Chat.js.SDK#277).
@Suite struct StateMachineCallDeadlineTests {
    static func connected(_ profile: Profile = Fixtures.cometChat) -> Rig {
        var rig = Rig(profile)
        rig.showsCallDeadline = true
        rig.connectedAuto()
        return rig
    }

    @Test func anUnansweredCallFailsAtTheDeadlineAndTheConnectionStays() {
        var rig = Self.connected()
        let (lookup, sent) = rig.call(.getUser(uid: "bob"))
        #expect(sent == [.send(.integer(2), .getUser(uid: "bob")), .scheduleTimer(.callTimeout, afterMilliseconds: 10_000)])
        let fired = rig.fire(.callTimeout, afterMilliseconds: 10_000)
        #expect(fired == [.completeCall(lookup, .failure(ChatError(.webSocketError, "No reply to the call")))])
        #expect(rig.machine.status == .connected)
        // The reply that comes after all is ignored.
        #expect(rig.receive(.user(id: .integer(2), Rig.bob)) == [])
    }

    @Test func theDeadlineMovesToTheNextOldestCall() {
        var rig = Self.connected()
        let (first, _) = rig.call(.getUser(uid: "bob"))
        rig.now = rig.now.advanced(by: 4_000)
        let (second, queued) = rig.call(.fetchNext(request: "all", limit: 10, status: nil))
        #expect(queued.count == 1, "a later call does not move the oldest call's deadline: \(queued)")
        rig.now = rig.now.advanced(by: 1_000)
        #expect(rig.receive(.user(id: .integer(2), Rig.bob))
                == [.cancelTimer(.callTimeout), .scheduleTimer(.callTimeout, afterMilliseconds: 9_000),
                    .completeCall(first, .success(.user(Rig.bob)))])
        #expect(rig.fire(.callTimeout, afterMilliseconds: 9_000)
                == [.completeCall(second, .failure(ChatError(.webSocketError, "No reply to the call")))])
    }

    @Test func answeringANewerCallLeavesTheOldestCallsDeadline() {
        var rig = Self.connected()
        let (first, _) = rig.call(.getUser(uid: "bob"))
        rig.now = rig.now.advanced(by: 4_000)
        let (second, _) = rig.call(.getUser(uid: "carol"))
        #expect(rig.receive(.user(id: .integer(3), Rig.bob)) == [.completeCall(second, .success(.user(Rig.bob)))])
        #expect(rig.fire(.callTimeout, afterMilliseconds: 6_000)
                == [.completeCall(first, .failure(ChatError(.webSocketError, "No reply to the call")))])
    }

    @Test func aLostConnectionDisarmsTheDeadline() {
        var rig = Self.connected()
        _ = rig.call(.getUser(uid: "bob"))
        #expect(rig.closed(nil).contains(.cancelTimer(.callTimeout)))
        #expect(rig.fire(.callTimeout, afterMilliseconds: 10_000) == [])
    }

    @Test func theDeadlineIsTheProfilesValue() {
        var profile = Fixtures.cometChat
        profile.callTimeout = 8
        var rig = Self.connected(profile)
        #expect(rig.call(.fetchNext(request: "all", limit: 10, status: nil)).1.last
                == .scheduleTimer(.callTimeout, afterMilliseconds: 8_000))
    }
}
