/// One thing a fuzzed history does to the server. Each action becomes one or two
/// scenario steps (see ``FuzzAction/steps``); wire clients are named so that a
/// history stays readable after shrinking.
public enum FuzzAction: Sendable, Equatable {
    /// Opens a wire client (`wire: NAME`) and, with a login, logs it in at once.
    case connect(name: String, login: LoginSpec?)
    /// Sends `login` on an open connection (a second one gets ERR_ALREADY_LOGGED_IN).
    case login(name: String, LoginSpec)
    /// Sends the `ping` op: activity that keeps the connection alive.
    case ping(name: String)
    /// Sends `logout`.
    case logout(name: String)
    /// The client starts a closing handshake with code 1000 (the app disconnects).
    case close(name: String)
    /// The client's TCP connection is reset (network lost, app killed).
    case drop(name: String)
    /// Virtual time moves on: the app is backgrounded or simply quiet.
    case advance(milliseconds: Int64)
    /// `server.fault: {fault: drop, ...}`: the server resets matching connections.
    case faultDrop(FaultSelector)
    /// `server.fault: {fault: blackhole, ...}` on or off.
    case blackhole(FaultSelector, enabled: Bool)
    /// `server.clearFaults`.
    case clearFaults
    /// `server.app`: new device policy settings; every connection is closed with 4009.
    case setApp(clientKickControl: Bool, mobileDevicesPerUser: Int)
    /// `server.reset`: the starting fixtures again, every connection closed with 4009.
    case reset

    /// The action's kind, for signatures and statistics.
    public var kindName: String {
        switch self {
        case .connect(_, let login): login == nil ? "open" : "connect"
        case .login: "login"
        case .ping: "ping"
        case .logout: "logout"
        case .close: "close"
        case .drop: "drop"
        case .advance: "advance"
        case .faultDrop: "faultDrop"
        case .blackhole: "blackhole"
        case .clearFaults: "clearFaults"
        case .setApp: "setApp"
        case .reset: "reset"
        }
    }

    /// The same action speaking through the wire client `names` maps its name to.
    func renamingWire(_ names: [String: String]) -> FuzzAction {
        func rename(_ name: String) -> String { names[name] ?? name }
        switch self {
        case .connect(let name, let login): return .connect(name: rename(name), login: login)
        case .login(let name, let login): return .login(name: rename(name), login)
        case .ping(let name): return .ping(name: rename(name))
        case .logout(let name): return .logout(name: rename(name))
        case .close(let name): return .close(name: rename(name))
        case .drop(let name): return .drop(name: rename(name))
        default: return self
        }
    }

    /// Variants of a login action with one detail made plainer, for shrinking: the
    /// default subscription, and no reconnect flags.
    var simplerLogins: [FuzzAction] {
        let (name, spec): (String, LoginSpec)
        switch self {
        case .connect(let wire, let login?): (name, spec) = (wire, login)
        case .login(let wire, let login): (name, spec) = (wire, login)
        default: return []
        }
        var variants: [LoginSpec] = []
        if spec.presence != .allUsers { variants.append(spec.with { $0.presence = .allUsers }) }
        if spec.reconnect { variants.append(spec.with { $0.reconnect = false }) }
        if spec.reconnectKickEnable { variants.append(spec.with { $0.reconnectKickEnable = false }) }
        return variants.map { variant in
            if case .connect = self { return .connect(name: name, login: variant) }
            return .login(name: name, variant)
        }
    }
}
