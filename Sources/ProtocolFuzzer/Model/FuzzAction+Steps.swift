import ChatProtocol
import ConformanceHarness

extension FuzzAction {
    /// The action as scenario steps, each a mapping in the form scenario files use
    /// (docs/SCENARIOS.md).
    public var steps: [JSONValue] {
        switch self {
        case .connect(let name, let login):
            var steps: [JSONValue] = [["wire": .string(name)]]
            if let login { steps.append(Self.step("\(name).login", login.stepArgument)) }
            return steps
        case .login(let name, let login):
            return [Self.step("\(name).login", login.stepArgument)]
        case .ping(let name):
            return [Self.step("\(name).ping", .object(JSONObject()))]
        case .logout(let name):
            return [Self.step("\(name).logout", .object(JSONObject()))]
        case .close(let name):
            return [Self.step("\(name).close", 1000)]
        case .drop(let name):
            return [Self.step("\(name).drop", .object(JSONObject()))]
        case .advance(let milliseconds):
            return [Self.step("advance", .string(ScenarioWriter.duration(milliseconds)))]
        case .faultDrop(let selector):
            return [Self.step("server.fault", .object(JSONObject([("fault", "drop")] + selector.fields)))]
        case .blackhole(let selector, let enabled):
            var fields: [(String, JSONValue)] = [("fault", "blackhole")] + selector.fields
            if !enabled { fields.append(("enabled", false)) }
            return [Self.step("server.fault", .object(JSONObject(fields)))]
        case .clearFaults:
            return [Self.step("server.clearFaults", .object(JSONObject()))]
        case .setApp(let clientKickControl, let mobileDevicesPerUser):
            return [Self.step("server.app", Self.appSettings(clientKickControl: clientKickControl,
                                                            mobileDevicesPerUser: mobileDevicesPerUser))]
        case .reset:
            return [Self.step("server.reset", .object(JSONObject()))]
        }
    }

    /// The app settings a history varies, in the shape of `app.json`. Both fields are
    /// always given, so the result does not depend on how a partial `app` is merged.
    static func appSettings(clientKickControl: Bool, mobileDevicesPerUser: Int) -> JSONValue {
        .object(JSONObject([
            ("clientKickControl", .bool(clientKickControl)),
            ("devicePolicy", .object(JSONObject([("mobileDevicesPerUser", .integer(Int64(mobileDevicesPerUser)))]))),
        ]))
    }

    private static func step(_ key: String, _ value: JSONValue) -> JSONValue {
        .object(JSONObject([(key, value)]))
    }
}
