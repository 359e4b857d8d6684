import ChatProtocol

/// What a driver said about itself in its `hello` (docs/DRIVER.md, "Handshake").
public struct DriverCapabilities: Sendable {
    public var sdkName: String
    public var sdkVersion: String
    public var profiles: Set<String>
    public var virtualTime: Bool
    public var commands: Set<String>
    public var events: Set<String>
    /// Whether `state` replies list the driver's sockets (an exact settle).
    public var sockets: Bool
    /// The SDK's manifest, when the hello carries one (docs/SPECIFICATION.md).
    public var manifest: JSONValue?
    /// The whole `hello`, for reports that show what the driver said (`mockchat matrix`).
    public var hello: JSONValue

    init(hello: JSONValue) throws(ScenarioError) {
        guard hello["type"]?.stringValue == "hello" else { throw ScenarioError("expected a hello, got \(hello)") }
        guard hello["protocol"]?.intValue == 1 else {
            throw ScenarioError("speaks driver protocol \(hello["protocol"]?.description ?? "(none)"); this harness speaks 1")
        }
        func strings(_ key: String) -> Set<String> { Set(hello[key]?.arrayValue?.compactMap(\.stringValue) ?? []) }
        sdkName = hello["sdk"]?["name"]?.stringValue ?? "unnamed SDK"
        sdkVersion = hello["sdk"]?["version"]?.stringValue ?? "?"
        profiles = strings("profiles")
        virtualTime = hello["virtualTime"]?.boolValue ?? false
        commands = strings("commands")
        events = strings("events")
        sockets = hello["sockets"]?.boolValue ?? false
        manifest = hello["manifest"]
        self.hello = hello
    }

    /// Why this driver cannot run `scenario`, or nil when it can: a command, an event
    /// kind or a profile it lacks, named with the step that needs it.
    func missing(for scenario: Scenario) -> String? {
        var sdkClients: Set<String> = []
        for step in scenario.steps {
            switch step.action {
            case .client(let name, let profile, _, _):
                sdkClients.insert(name)
                let wanted = profile ?? scenario.profile
                if !profiles.contains(wanted) { return "the driver does not implement profile '\(wanted)' (step \(step.number))" }
                if !commands.contains("create") { return "the driver does not support 'create' (step \(step.number))" }
            case .call(let client, let method, _, _) where sdkClients.contains(client):
                let name = method == "initialize" ? "init" : method
                if !commands.contains(name) { return "the driver does not support '\(name)' (step \(step.number))" }
            case .expect(let expectations, _):
                for expectation in expectations where sdkClients.contains(expectation.subject) {
                    if let need = Self.requirement(of: expectation.property) {
                        let supported = need.kind == "command" ? commands.contains(need.name) : events.contains(need.name)
                        if !supported {
                            return "the driver does not report '\(need.name)' \(need.kind == "command" ? "(a command)" : "events"), "
                                + "needed by \(expectation.subject).\(expectation.property) (step \(step.number))"
                        }
                    }
                }
            default:
                continue
            }
        }
        return nil
    }

    /// The command or event kind a client assertion is answered from.
    private static func requirement(of property: String) -> (kind: String, name: String)? {
        switch property {
        case "status", "backgroundTaskEnabled", "loggedInUser": ("command", "inspect")
        case "connectionEvents": ("event", "connection")
        case "connectionListeners": ("event", "connectionListener")
        case "connectAttempts": ("event", "socketOpening")
        case "received": ("event", "presence")
        default: nil
        }
    }
}
