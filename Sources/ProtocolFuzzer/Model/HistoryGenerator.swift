import ChatProtocol

/// Generates random histories over a few users and their devices.
///
/// The generator keeps its own ``ReferenceModel`` while it writes, so that it picks
/// actions that make sense in the current state (ping a connection that is open, log
/// in a pending one) and keeps the number of connections bounded. Each user has two
/// mobile devices (`phone`, `tablet`), a `laptop` (desktop) and a `web` client;
/// occasionally a device logs in under another platform, which exercises the
/// "same device id, any platform" rule. Wire clients are named after their device:
/// `bob-phone`, then `bob-phone-2` for the next connection from that device.
public struct HistoryGenerator: Sendable {
    public struct Configuration: Sendable {
        /// Users a history may use; each history takes a few of them.
        public var users = ["alice", "bob", "carol", "dave", "erin", "frank"]
        public var usersPerHistory = 3...5
        /// Open connections beyond which the generator stops opening new ones.
        public var maxOpenConnections = 10
        public init() {}
    }

    /// A device kind: its id suffix, platform and how often it is chosen.
    private static let devices: [(suffix: String, platform: Platform, weight: Int)] = [
        ("phone", .mobile, 5), ("tablet", .mobile, 2), ("laptop", .desktop, 3), ("web", .web, 2),
    ]
    private static let roles = ["admin", "moderator", "support", "default"]

    public let roster: Roster
    public let configuration: Configuration

    public init(roster: Roster, configuration: Configuration = .init()) {
        self.roster = roster
        self.configuration = configuration
    }

    /// A history of `length` actions; the same seed always gives the same history.
    public func generate(seed: UInt64, length: Int) -> History {
        var writer = Writer(random: FuzzRandom(seed: seed), roster: roster, configuration: configuration)
        let settings = ReferenceModel.Settings(clientKickControl: writer.random.chance(0.4),
                                               mobileDevicesPerUser: writer.random.chance(0.2) ? 2 : 1)
        writer.start(settings: settings)
        var actions: [FuzzAction] = []
        var attempts = 0
        while actions.count < length, attempts < length * 20 {
            attempts += 1
            let action = writer.nextAction()
            if writer.model.apply(action) { actions.append(action) }
        }
        return History(seed: seed, settings: settings, actions: actions)
    }

    /// The state of one history being written.
    private struct Writer {
        var random: FuzzRandom
        let roster: Roster
        let configuration: Configuration
        var model: ReferenceModel
        var users: [String] = []
        /// Connections opened per device id, for names.
        var opened: [String: Int] = [:]
        /// The device a pending connection was opened for.
        var intended: [String: (uid: String, device: String, platform: Platform)] = [:]

        init(random: FuzzRandom, roster: Roster, configuration: Configuration) {
            self.random = random
            self.roster = roster
            self.configuration = configuration
            model = ReferenceModel(roster: roster, settings: .init())
        }

        mutating func start(settings: ReferenceModel.Settings) {
            model = ReferenceModel(roster: roster, settings: settings)
            var pool = configuration.users
            let count = min(pool.count, random.int(in: configuration.usersPerHistory))
            for _ in 0..<count { users.append(pool.remove(at: random.below(pool.count))) }
        }

        mutating func nextAction() -> FuzzAction {
            let live = model.live
            let loggedIn = live.filter(\.isLoggedIn)
            let pending = live.filter { !$0.isLoggedIn }
            let room = live.count < configuration.maxOpenConnections
            enum Kind { case connect, open, loginPending, loginAgain, badLogin, ping, logout, close, drop, advance,
                        faultDrop, blackhole, clearFaults, setApp, reset }
            let kind = random.weighted([
                (Kind.connect, room ? 48 : 0), (.open, room ? 6 : 0), (.loginPending, pending.isEmpty ? 0 : 16),
                (.loginAgain, loggedIn.isEmpty ? 0 : 4), (.badLogin, room ? 4 : 0), (.ping, live.isEmpty ? 0 : 32),
                (.logout, live.isEmpty ? 0 : 12), (.close, live.isEmpty ? 0 : 8), (.drop, live.isEmpty ? 0 : 12),
                (.advance, 28), (.faultDrop, loggedIn.isEmpty ? 0 : 6), (.blackhole, 6),
                (.clearFaults, model.blackholes.isEmpty ? 0 : 2), (.setApp, 2), (.reset, 1),
            ])
            switch kind {
            case .connect:
                let (uid, device, platform) = chooseDevice()
                return .connect(name: name(for: device), login: login(uid: uid, device: device, platform: platform))
            case .open:
                let (uid, device, platform) = chooseDevice()
                let name = name(for: device)
                intended[name] = (uid, device, platform)
                return .connect(name: name, login: nil)
            case .loginPending:
                let target = random.pick(pending).name
                var (uid, device, platform) = intended[target] ?? chooseDevice()
                if random.chance(0.2) { (uid, device, platform) = chooseDevice() }
                return .login(name: target, login(uid: uid, device: device, platform: platform))
            case .loginAgain:
                let target = random.pick(loggedIn)
                let (uid, device, platform) = chooseDevice()
                return .login(name: target.name, target.login ?? login(uid: uid, device: device, platform: platform))
            case .badLogin:
                return badLogin()
            case .ping:
                let targets = loggedIn.isEmpty || random.chance(0.1) ? live : loggedIn
                return .ping(name: random.pick(targets).name)
            case .logout:
                let targets = loggedIn.isEmpty || random.chance(0.1) ? live : loggedIn
                return .logout(name: random.pick(targets).name)
            case .close:
                return .close(name: random.pick(live).name)
            case .drop:
                return .drop(name: random.pick(live).name)
            case .advance:
                return .advance(milliseconds: advance())
            case .faultDrop:
                let target = random.pick(loggedIn).login!
                return .faultDrop(random.chance(0.6) ? FaultSelector(uid: target.uid) : FaultSelector(deviceId: target.device))
            case .blackhole:
                if !model.blackholes.isEmpty, random.chance(0.35) {
                    return .blackhole(random.pick(model.blackholes), enabled: false)
                }
                let (uid, device, _) = chooseDevice()
                return .blackhole(random.chance(0.6) ? FaultSelector(uid: uid) : FaultSelector(deviceId: device), enabled: true)
            case .clearFaults:
                return .clearFaults
            case .setApp:
                return .setApp(clientKickControl: random.chance(0.5), mobileDevicesPerUser: random.chance(0.25) ? 2 : 1)
            case .reset:
                return .reset
            }
        }

        private mutating func chooseDevice() -> (uid: String, device: String, platform: Platform) {
            let uid = random.pick(users)
            let kind = random.weighted(HistoryGenerator.devices.map { ($0, $0.weight) })
            var platform = kind.platform
            if random.chance(0.05) { platform = random.pick(Platform.allCases) }
            return (uid, "\(uid)-\(kind.suffix)", platform)
        }

        private mutating func name(for device: String) -> String {
            let count = opened[device, default: 0] + 1
            opened[device] = count
            return count == 1 ? device : "\(device)-\(count)"
        }

        private mutating func login(uid: String, device: String, platform: Platform) -> LoginSpec {
            let presence: PresenceSubscription
            switch random.weighted([(0, 45), (1, 25), (2, 15), (3, 15)]) {
            case 0: presence = .allUsers
            case 1: presence = .friends
            case 2: presence = .roles(HistoryGenerator.roles.filter { _ in random.chance(0.5) })
            default: presence = .none
            }
            let reconnect = random.chance(0.4)
            return LoginSpec(uid: uid, device: device, platform: platform, presence: presence, reconnect: reconnect,
                             reconnectKickEnable: random.chance(0.5))
        }

        /// A login the server must refuse: an unknown user, a wrong key, a deactivated
        /// user, or an unknown user with a wrong key.
        private mutating func badLogin() -> FuzzAction {
            let (uid, device, platform) = chooseDevice()
            var spec = login(uid: uid, device: device, platform: platform)
            switch random.below(4) {
            case 0: (spec.uid, spec.device) = ("nobody", "nobody-phone")
            case 1: spec.authKey = "wrong-key"
            case 2: (spec.uid, spec.device) = ("oscar", "oscar-phone")
            default: (spec.uid, spec.device, spec.authKey) = ("nobody", "nobody-phone", "wrong-key")
            }
            return .connect(name: name(for: spec.device), login: spec)
        }

        /// Mostly short pauses; sometimes exactly to a connection's heartbeat deadline
        /// or one millisecond before it; sometimes long enough for everything to time out.
        private mutating func advance() -> Int64 {
            let timeout = model.settings.heartbeatMilliseconds
            let deadlines = model.live.map { $0.lastActivity + timeout - model.now }.filter { $0 > 0 }
            switch random.weighted([(0, 35), (1, 25), (2, 15), (3, 10), (4, 10), (5, 5)]) {
            case 0: return Int64(random.int(in: 1...30)) * 100
            case 1: return Int64(random.int(in: 3...12)) * 1000
            case 2 where !deadlines.isEmpty: return random.pick(deadlines)
            case 3 where !deadlines.isEmpty: return max(0, random.pick(deadlines) - 1)
            case 4: return timeout
            case 5: return 2 * timeout + 1000
            default: return 5000
            }
        }
    }
}
