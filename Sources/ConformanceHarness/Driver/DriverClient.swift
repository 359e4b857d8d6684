import ChatProtocol
import MockChatCore
import ReferenceClient

/// A scenario client served by a driver: each command is a request, and what the SDK
/// did comes back as replies and events (docs/DRIVER.md).
final class DriverClient: ScenarioClient {
    let name: String
    private unowned let link: DriverLink
    private(set) var observations: [Observation] = []
    private var results: [CallID: CallResult] = [:]
    /// Calls answered `pending`, by request id.
    private var pending: [Int64: CallID] = [:]
    private var nextCall = 1

    /// Asks the driver for a fresh SDK instance named `name`.
    /// `parameters`: the values a manifest declares, sent with `create` when there are any.
    init(name: String, link: DriverLink, profile: String, device: CommandTable.Device, seed: UInt64,
         parameters: [String: JSONValue] = [:]) throws(ScenarioError) {
        self.name = name
        self.link = link
        var args: JSONObject = ["profile": .string(profile), "device": .string(device.deviceId),
                                "platform": .string(device.platform.rawValue), "seed": .integer(Int64(bitPattern: seed))]
        if !parameters.isEmpty { args["parameters"] = .object(JSONObject(parameters.sorted { $0.key < $1.key })) }
        try link.request("command", [("client", .string(name)), ("command", "create"), ("args", .object(args))],
                         doing: "create (client \(name))")
    }

    func perform(_ command: SDKCommand) throws(ScenarioError) -> CallID? {
        let (method, args) = DriverCodec.encode(command)
        let reply = try link.request("command", [("client", .string(name)), ("command", .string(method)), ("args", args)],
                                     doing: "\(method) (client \(name))")
        guard command.isCall else { return nil }
        let call = CallID(nextCall)
        nextCall += 1
        if let result = reply["result"] {
            results[call] = try decode(result, of: method)
        } else if reply["pending"]?.boolValue == true, let id = reply["id"]?.intValue {
            pending[id] = call
        } else {
            throw ScenarioError("driver \(link.channel.label) answered \(method) (client \(name)) with neither a result nor pending")
        }
        return call
    }

    func result(of call: CallID) -> CallResult? { results[call] }

    func inspect() throws(ScenarioError) -> ClientState {
        let reply = try link.request("command", [("client", .string(name)), ("command", "inspect"), ("args", [:])],
                                     doing: "inspect (client \(name))")
        guard let state = reply["state"], let status = state["status"]?.stringValue.flatMap(ConnectionStatus.init(rawValue:)),
              let flag = state["backgroundTaskEnabled"]?.boolValue else {
            throw ScenarioError("driver \(link.channel.label) answered inspect (client \(name)) without a valid state: \(reply)")
        }
        return ClientState(status: status, backgroundTaskEnabled: flag, loggedInUser: state["loggedInUser"]?.stringValue)
    }

    /// One event for this client.
    func receive(_ event: JSONValue) throws(ScenarioError) {
        guard let at = event["at"]?.intValue else { throw ScenarioError("sent an event without 'at': \(event)") }
        let time = try DriverLink.instant(at, "an event's 'at'")
        switch event["event"]?.stringValue {
        case "socketOpening":
            observations.append(Observation(time: time, isAttempt: true))
        case "connection":
            guard let name = event["name"]?.stringValue,
                  ["connecting", "connected", "disconnected", "kicked", "error"].contains(name) else {
                throw ScenarioError("sent a connection event with an unknown name: \(event)")
            }
            observations.append(Observation(time: time, connectionEvent: name))
        case "connectionListener":
            guard let listener = event["listener"]?.stringValue, let name = event["name"]?.stringValue,
                  ["connecting", "connected", "disconnected", "kicked", "error"].contains(name) else {
                throw ScenarioError("sent a connectionListener event without listener and a known name: \(event)")
            }
            observations.append(Observation(time: time, listenerCall: .init(listener: listener, name: name)))
        case "presence":
            guard let listener = event["listener"]?.stringValue, let change = event["change"]?.stringValue,
                  change == "online" || change == "offline", let user = event["user"].flatMap(User.init(json:)) else {
                throw ScenarioError("sent a presence event without listener, change (online/offline) and user: \(event)")
            }
            observations.append(Observation(time: time, userEvent: .init(time: time, listener: listener, change: change,
                                                                         user: user)))
        case "result":
            guard let id = event["command"]?.intValue, let call = pending.removeValue(forKey: id), let result = event["result"] else {
                throw ScenarioError("sent a result for no pending call: \(event)")
            }
            results[call] = try decode(result, of: "the call of request \(id)")
        default:
            throw ScenarioError("sent an unknown event: \(event)")
        }
    }

    private func decode(_ result: JSONValue, of what: String) throws(ScenarioError) -> CallResult {
        guard let decoded = DriverCodec.decodeResult(result) else {
            throw ScenarioError("sent a result for \(what) that is not one of docs/DRIVER.md's shapes: \(result)")
        }
        return decoded
    }
}
