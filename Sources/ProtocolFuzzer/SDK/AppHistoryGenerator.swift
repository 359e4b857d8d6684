import ChatProtocol

/// Generates random histories of one app (the SDK under test, logged in as alice, or as
/// a user who blocks or is blocked: carol has blocked mallory, ivan has blocked judy) and
/// its environment: SDK calls, lifecycle changes with and without background services,
/// relaunches, the network going down, up or weak, the server dropping the app or
/// refusing connections, a second device of alice logging in (a kick), other users
/// coming and going (presence), and the clock moving across the 30 s background
/// window, the keep-alive and the reconnection backoff steps.
///
/// Only commands the driver lists in its handshake are generated, so a history never
/// needs a step the driver does not support.
public struct AppHistoryGenerator: Sendable {
    /// Driver commands available (`create`, `init`, `login`, ...).
    public var commands: Set<String>
    /// Profiles to choose from.
    public var profiles: [String]

    /// Backoff steps of the profiles (Fixtures/profiles), the keep-alive and pong
    /// timeouts, and the edges of the 30 s window, in milliseconds.
    private static let interestingDelays: [Int64] = [1, 50, 250, 500, 1000, 2000, 4000, 8000, 10_000, 16_000,
                                                     29_999, 30_000, 30_001, 32_000]
    /// Who the app logs in as: mostly alice; otherwise one side of a blocked pair, so that
    /// presence and user lookups carry `hasBlockedMe` / `blockedByMe` both ways.
    private static let appUsers: [(String, Int)] = [("alice", 6), ("carol", 1), ("mallory", 1), ("ivan", 1), ("judy", 1)]
    /// Other users (the app's own user left out): friends of alice (bob, carol) and not
    /// (erin, frank), of several roles, and both sides of the blocked pairs.
    private static let peers = ["bob", "carol", "erin", "frank", "mallory", "ivan", "judy"]
    /// Subscriptions `init` asks for.
    private static let subscriptions: [(JSONValue, Int)] = [
        ("all", 5), ("friends", 2), ("none", 1), (["moderator"], 1), (["default", "support"], 1),
    ]

    public init(commands: Set<String>, profiles: [String]) {
        self.commands = commands
        self.profiles = profiles
    }

    /// A history of `length` actions; the same seed always gives the same history.
    public func generate(seed: UInt64, length: Int) -> AppHistory {
        var random = FuzzRandom(seed: seed)
        let profile = random.pick(profiles)
        let app: JSONValue? = random.chance(0.3) ? ["clientKickControl": true] : nil
        let user = random.weighted(Self.appUsers)
        var writer = Writer(random: random, commands: commands, user: user)
        var actions: [AppAction] = []
        // Most histories start as an app does: the SDK set up, often a presence listener,
        // the login. Shrinking may take any of that away.
        if random.chance(0.9), commands.contains("init") { actions.append(writer.initialize()) }
        if random.chance(0.5), commands.contains("addUserListener") { actions.append(.call("addUserListener", "l1")) }
        if random.chance(0.9), commands.contains("login") { actions.append(.call("login", .string(user))) }
        while actions.count < length { actions.append(writer.next()) }
        return AppHistory(seed: seed, profile: profile, app: app, actions: Array(actions.prefix(length)))
    }

    /// The state of one history being written: which wire clients are open.
    private struct Writer {
        var random: FuzzRandom
        let commands: Set<String>
        /// The app's user.
        let user: String
        /// Everyone else who may come online.
        let peers: [String]
        var open: [String] = []
        var opened = 0

        init(random: FuzzRandom, commands: Set<String>, user: String) {
            self.random = random
            self.commands = commands
            self.user = user
            peers = AppHistoryGenerator.peers.filter { $0 != user }
        }

        mutating func initialize() -> AppAction {
            var settings = JSONObject([("presence", random.weighted(AppHistoryGenerator.subscriptions))])
            if random.chance(0.8) { settings["autoEstablishSocketConnection"] = .bool(random.chance(0.5)) }
            if random.chance(0.5) { settings["reconnectKickEnable"] = .bool(random.chance(0.5)) }
            return .call("init", .object(settings))
        }

        private enum Kind {
            case login, logout, connect, disconnect, ping, getLoggedInUser, getConnectionStatus, backgroundTaskEnabled
            case getUser, fetchNext, addUserListener, removeUserListener, addConnectionListener, removeConnectionListener
            case configureServices
            case willResignActive, didBackground, foreground, relaunch, network, serverDrop, refuse, secondDevice
            case peerOnline, peerLeaves, advance
        }

        private static let weights: [(Kind, Int)] = [
            (.login, 6), (.logout, 2), (.connect, 8), (.disconnect, 4), (.ping, 6), (.getLoggedInUser, 1),
            (.getConnectionStatus, 1), (.backgroundTaskEnabled, 1), (.getUser, 2), (.fetchNext, 3), (.addUserListener, 3),
            (.removeUserListener, 1), (.addConnectionListener, 2), (.removeConnectionListener, 1), (.configureServices, 3), (.willResignActive, 3),
            (.didBackground, 6), (.foreground, 6), (.relaunch, 1), (.network, 8), (.serverDrop, 3), (.refuse, 5),
            (.secondDevice, 3), (.peerOnline, 4), (.peerLeaves, 3), (.advance, 24),
        ]

        mutating func next() -> AppAction {
            while true {
                if let action = make(random.weighted(Self.weights)), action.command.map(commands.contains) ?? true {
                    return action
                }
            }
        }

        private mutating func make(_ kind: Kind) -> AppAction? {
            switch kind {
            case .login: .call("login", loginArgument())
            case .logout: .call("logout")
            case .connect: .call("connect")
            case .disconnect: .call("disconnect")
            case .ping: .call("ping")
            case .getLoggedInUser: .call("getLoggedInUser")
            case .getConnectionStatus: .call("getConnectionStatus")
            case .backgroundTaskEnabled: .call("backgroundTaskEnabled")
            case .getUser: .call("getUser", .string(random.pick(peers + [user, "nobody"])))
            case .fetchNext: fetchNext()
            case .addUserListener: .call("addUserListener", "l1")
            case .removeUserListener: .call("removeUserListener", "l1")
            case .addConnectionListener: .call("addConnectionListener", random.chance(0.7) ? "c1" : "c2")
            case .removeConnectionListener: .call("removeConnectionListener", random.chance(0.7) ? "c1" : "c2")
            case .configureServices: .call("configureServices", random.chance(0.5) ? "willResignActive" : "didBackground")
            case .willResignActive: .environment("willResignActive")
            case .didBackground: .environment("didBackground")
            case .foreground: .environment("foreground")
            case .relaunch: .environment("relaunch")
            case .network: network()
            case .serverDrop: .serverDrop(uid: user)
            case .refuse: .refuseConnections(random.chance(0.5))
            case .secondDevice: secondDevice()
            case .peerOnline: peerOnline()
            case .peerLeaves: peerLeaves()
            case .advance: .advance(milliseconds: delay())
            }
        }

        private mutating func loginArgument() -> JSONValue {
            switch random.weighted([(0, 85), (1, 10), (2, 5)]) {
            case 0: .string(user)
            case 1: "nobody"
            default: ["uid": .string(user), "authKey": "wrong-key"]
            }
        }

        /// A page of users: mostly valid limits, sometimes 0 or 101 (which must fail).
        private mutating func fetchNext() -> AppAction {
            let limit = random.weighted([(2, 4), (30, 2), (0, 1), (101, 2)])
            var request = JSONObject([("request", .string(random.chance(0.5) ? "online" : "all")), ("limit", .integer(Int64(limit)))])
            if request["request"] == "online" { request["status"] = "online" }
            return .call("fetchNext", .object(request))
        }

        private mutating func network() -> AppAction {
            let condition = random.weighted([("down", 4), ("up", 5), ("weak", 2)])
            return .environment("network", .string(condition), kind: "network \(condition)")
        }

        private mutating func wireName(_ base: String) -> String {
            opened += 1
            return "\(base)-\(opened)"
        }

        private mutating func secondDevice() -> AppAction {
            let (device, platform) = random.chance(0.75) ? ("\(user)-tablet", Platform.mobile) : ("\(user)-laptop", .desktop)
            let name = wireName(device)
            open.append(name)
            return .deviceLogin(name: name, uid: user, device: device, platform: platform, kind: "second device")
        }

        private mutating func peerOnline() -> AppAction {
            let uid = random.pick(peers)
            let name = wireName(uid)
            open.append(name)
            return .deviceLogin(name: name, uid: uid, device: "\(uid)-phone", platform: .mobile, kind: "peer online")
        }

        private mutating func peerLeaves() -> AppAction? {
            guard !open.isEmpty else { return nil }
            let name = open.remove(at: random.below(open.count))
            return .deviceLeaves(name: name, how: random.chance(0.6) ? "drop" : "close")
        }

        /// Mostly the interesting edges; otherwise a short pause or a long one.
        private mutating func delay() -> Int64 {
            switch random.weighted([(0, 45), (1, 35), (2, 20)]) {
            case 0: random.pick(AppHistoryGenerator.interestingDelays)
            case 1: Int64(random.int(in: 1...30)) * 100
            default: Int64(random.int(in: 31...75)) * 1000
            }
        }
    }
}
