/// Connection ids kept sorted, for recipient lists that must come out in order of
/// arrival without sorting every session on each event.
///
/// Ids are handed out in increasing order, so an insertion lands at or near the end:
/// `insert` and `remove` are a binary search plus a short move.
struct ConnectionSet: Sendable, Equatable {
    private(set) var ids: [ConnectionID] = []

    var isEmpty: Bool { ids.isEmpty }

    /// O(log n) search; O(1) for the newest id.
    mutating func insert(_ id: ConnectionID) {
        if let last = ids.last, last < id {
            ids.append(id)
            return
        }
        let index = position(of: id)
        guard index == ids.endIndex || ids[index] != id else { return }
        ids.insert(id, at: index)
    }

    /// O(log n) search and a move of the ids after it.
    mutating func remove(_ id: ConnectionID) {
        let index = position(of: id)
        guard index < ids.endIndex, ids[index] == id else { return }
        ids.remove(at: index)
    }

    /// The first index whose id is not below `id`.
    private func position(of id: ConnectionID) -> Int {
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
