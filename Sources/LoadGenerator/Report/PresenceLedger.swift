/// Counts presence events against what the server confirmed, per subscriber and user.
///
/// A churning user's login reply confirms one `user.online` owed to every subscriber,
/// its logout reply one `user.offline`. At the end every subscriber must have received
/// exactly what was confirmed: anything short is lost, anything over is unexpected, and
/// two events of the same kind in a row for one user are out of order.
public struct PresenceLedger: Sendable, Equatable {
    public let subscribers: Int
    public let users: Int
    private var confirmed: [Int]       // [user * 2 + (online ? 0 : 1)]
    private var delivered: [Int32]     // [(subscriber * users + user) * 2 + kind]
    private var last: [UInt8]          // per (subscriber, user): 0 none, 1 online, 2 offline
    public private(set) var received = 0
    public private(set) var outOfOrder = 0
    /// Events about users the run does not churn.
    public private(set) var foreign = 0

    public init(subscribers: Int, users: Int) {
        self.subscribers = subscribers
        self.users = users
        confirmed = Array(repeating: 0, count: users * 2)
        delivered = Array(repeating: 0, count: subscribers * users * 2)
        last = Array(repeating: 0, count: subscribers * users)
    }

    /// The server confirmed that `user` went online (login reply) or offline (logout reply).
    public mutating func confirm(user: Int, online: Bool) {
        confirmed[user * 2 + (online ? 0 : 1)] += 1
    }

    /// Subscriber `subscriber` received an event about `user` (nil: not a churned user).
    public mutating func receive(subscriber: Int, user: Int?, online: Bool) {
        received += 1
        guard let user, user >= 0, user < users else {
            foreign += 1
            return
        }
        let pair = subscriber * users + user
        delivered[pair * 2 + (online ? 0 : 1)] += 1
        let state: UInt8 = online ? 1 : 2
        if last[pair] == state { outOfOrder += 1 }
        last[pair] = state
    }

    /// Events owed to all subscribers so far.
    public var expected: Int { confirmed.reduce(0, +) * subscribers }

    /// Events owed and not (yet) received.
    public var lost: Int { shortfall(over: false) }

    /// Events received beyond what was owed (including foreign ones).
    public var unexpected: Int { shortfall(over: true) + foreign }

    private func shortfall(over: Bool) -> Int {
        var total = 0
        for subscriber in 0..<subscribers {
            for slot in 0..<(users * 2) {
                let difference = Int(delivered[subscriber * users * 2 + slot]) - confirmed[slot]
                total += over ? max(0, difference) : max(0, -difference)
            }
        }
        return total
    }
}
