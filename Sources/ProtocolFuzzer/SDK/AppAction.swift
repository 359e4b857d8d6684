import ChatProtocol
import ConformanceHarness

/// One thing an app or its environment does in an SDK history, as the scenario steps
/// that do it (docs/SCENARIOS.md). The SDK under test is the scenario client
/// ``AppAction/client``; other devices and users are wire clients, so everything they
/// do is the same in both runs of a history.
public struct AppAction: Sendable, Equatable {
    /// The scenario client that stands for the app under test.
    public static let client = "app"

    /// The kind, for statistics and messages: `login`, `didBackground`, `network down`,
    /// `advance`, `second device`, ...
    public var kind: String
    /// The steps, each a mapping in the form files use.
    public var steps: [JSONValue]
    /// The driver command the action needs, if it reaches the SDK.
    public var command: String?
    /// Whether it is an SDK call whose outcome (result or error code) is compared.
    public var isCall: Bool

    /// `app.METHOD: ARGUMENT`, an API call.
    public static func call(_ method: String, _ argument: JSONValue = .object(JSONObject()), kind: String? = nil) -> AppAction {
        AppAction(kind: kind ?? method, steps: [["\(client).\(method)": argument]], command: method == "initialize" ? "init" : method,
                  isCall: true)
    }

    /// `app.METHOD: ARGUMENT`, a lifecycle, network or relaunch change.
    public static func environment(_ method: String, _ argument: JSONValue = .object(JSONObject()), kind: String? = nil)
        -> AppAction
    {
        AppAction(kind: kind ?? method, steps: [["\(client).\(method)": argument]], command: method, isCall: false)
    }

    /// Virtual time moves on.
    public static func advance(milliseconds: Int64) -> AppAction {
        AppAction(kind: "advance", steps: [["advance": .string(ScenarioWriter.duration(milliseconds))]], command: nil, isCall: false)
    }

    /// The server resets every connection of `uid`, with no close frame.
    public static func serverDrop(uid: String) -> AppAction {
        AppAction(kind: "server drop", steps: [["server.fault": ["fault": "drop", "uid": .string(uid)]]], command: nil,
                  isCall: false)
    }

    /// The server starts refusing new connections (`refuseConnections`), or stops (every fault cleared).
    public static func refuseConnections(_ refusing: Bool) -> AppAction {
        refusing
            ? AppAction(kind: "refuse connections", steps: [["server.fault": ["fault": "refuseConnections"]]], command: nil,
                        isCall: false)
            : AppAction(kind: "accept connections", steps: [["server.clearFaults": .object(JSONObject())]], command: nil,
                        isCall: false)
    }

    /// Another device logs in as `uid` over the wire client `name`: a second device of
    /// the app's user (the server may kick the app) or another user coming online.
    public static func deviceLogin(name: String, uid: String, device: String, platform: Platform, kind: String) -> AppAction {
        AppAction(kind: kind, steps: [
            ["wire": .string(name)],
            ["\(name).login": ["uid": .string(uid), "device": .string(device), "platform": .string(platform.rawValue)]],
        ], command: nil, isCall: false)
    }

    /// The wire client `name` goes away: a TCP reset (`drop`) or a closing handshake (`close`).
    public static func deviceLeaves(name: String, how: String) -> AppAction {
        AppAction(kind: "device \(how)", steps: [[ "\(name).\(how)": how == "close" ? 1000 : .object(JSONObject())]],
                  command: nil, isCall: false)
    }
}
