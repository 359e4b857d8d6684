import ChatProtocol
@testable import MockChatServer
import Testing

/// The order of the channel against snapshots: what a node applies after a rejoin,
/// what it drops, and when it must read a snapshot again.
@Suite struct ClusterSyncTests {
    private func message(_ seq: Int64, _ uid: String = "alice") -> ClusterMessage {
        ClusterMessage(seq: seq, event: .removed(uid: uid, field: "a/c\(seq)", lastActiveAt: Double(seq)))
    }

    @Test func heldMessagesAfterTheSnapshotAreAppliedInOrderAndOlderOnesDropped() {
        var sync = ClusterSync()
        sync.resyncStarted()
        // Messages read before the snapshot's reply: 4 and 5 are already in it.
        for seq: Int64 in [4, 7, 5, 6] { #expect(sync.received(message(seq)).isEmpty) }
        #expect(sync.snapshotArrived(seq: 5) == [.apply(message(6).event), .apply(message(7).event)])
        #expect(sync.state == .live(seq: 7))
        #expect(sync.received(message(7)).isEmpty)
        #expect(sync.received(message(8)) == [.apply(message(8).event)])
    }

    @Test func aGapAsksForAnotherSnapshot() {
        var sync = ClusterSync()
        sync.resyncStarted()
        #expect(sync.snapshotArrived(seq: 10) == [])
        #expect(sync.received(message(12)) == [.resync])
        #expect(sync.received(message(13)).isEmpty)
        #expect(sync.snapshotArrived(seq: 12) == [.apply(message(13).event)])
    }

    @Test func aGapAmongHeldMessagesKeepsTheRestForTheNextSnapshot() {
        var sync = ClusterSync()
        sync.resyncStarted()
        for seq: Int64 in [3, 5, 6] { _ = sync.received(message(seq)) }
        #expect(sync.snapshotArrived(seq: 2) == [.apply(message(3).event), .resync])
        #expect(sync.snapshotArrived(seq: 5) == [.apply(message(6).event)])
    }

    @Test func aSnapshotOlderThanTheViewIsIgnored() {
        var sync = ClusterSync()
        sync.resyncStarted()
        #expect(sync.snapshotArrived(seq: 3) == [])
        _ = sync.received(message(4))
        #expect(sync.snapshotArrived(seq: 4) == nil)
        #expect(sync.snapshotArrived(seq: 9) == [])
        #expect(sync.state == .live(seq: 9))
    }

    @Test func nothingIsAppliedOffline() {
        var sync = ClusterSync()
        #expect(sync.received(message(1)).isEmpty)
        #expect(sync.snapshotArrived(seq: 1) == nil)
    }

    @Test func messagesCarryTheirSequenceNumber() {
        let text = #"{"seq":42,"t":"remove","uid":"bob","field":"b/c3","lastActiveAt":7.5}"#
        #expect(ClusterMessage(text) == ClusterMessage(seq: 42, event: .removed(uid: "bob", field: "b/c3", lastActiveAt: 7.5)))
        #expect(ClusterMessage(#"{"t":"remove","uid":"bob","field":"b/c3","lastActiveAt":7.5}"#) == nil)
    }
}
