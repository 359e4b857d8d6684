import ChatProtocol
import ReferenceClient

/// The device events (`dns`, `sleep`, `throttle`, `networkChange`): rows of the command
/// table whose two forms differ most, a duration in a scenario and milliseconds on the
/// driver protocol.
extension CommandTable {
    static let deviceRows: [Row] = ["dns", "sleep", "throttle", "networkChange"].map { name in
        Row(name: name, scenario: { arguments, _ throws(ScenarioError) in .device(try scenarioDeviceEvent(name, arguments)) },
            driver: { args in driverDeviceEvent(name, args).map { .device($0) } })
    }

    static let dnsKinds = DeviceEvent.DNSFailureKind.allCases.map(\.rawValue).joined(separator: ", ")

    /// A `dns` event's `error` (absent: `notFound`); nil for a value that names no kind.
    static func dnsKind(_ value: JSONValue?) -> DeviceEvent.DNSFailureKind? {
        guard let value, !value.isNull else { return .notFound }
        return value.stringValue.flatMap(DeviceEvent.DNSFailureKind.init(rawValue:))
    }

    /// `dns: {fail: N | true | false, error: notFound | temporary}`, `sleep: 90s`, `throttle: 60s | off`, `networkChange: {}`.
    static func scenarioDeviceEvent(_ method: String, _ arguments: JSONValue) throws(ScenarioError) -> DeviceEvent {
        switch method {
        case "dns":
            guard let object = arguments.objectValue, let fail = object["fail"],
                  object.keys.allSatisfy({ $0 == "fail" || $0 == "error" }) else {
                throw ScenarioError("dns takes {fail: N} (the next N attempts), {fail: true} (until cleared) or {fail: false}, "
                                    + "and an optional error: \(dnsKinds)")
            }
            guard let kind = dnsKind(object["error"]) else {
                throw ScenarioError("dns error is one of \(dnsKinds), not \(object["error"]!)")
            }
            if let flag = fail.boolValue { return .dnsFailure(attempts: flag ? nil : 0, kind: kind) }
            guard let count = fail.intValue, (1...1_000_000).contains(count) else {
                throw ScenarioError("dns fail is a number of attempts from 1 to 1000000, true or false")
            }
            return .dnsFailure(attempts: Int(count), kind: kind)
        case "sleep":
            let milliseconds = try ScenarioLoader.duration(arguments)
            guard (1...DeviceEvent.maxSleepMilliseconds).contains(milliseconds) else {
                throw ScenarioError("sleep is a duration from 1ms to 24h")
            }
            return .sleep(milliseconds: milliseconds)
        case "throttle":
            if arguments.stringValue == "off" || arguments.boolValue == false { return .throttle(periodMilliseconds: 0) }
            let period = try ScenarioLoader.duration(arguments)
            guard (1...DeviceEvent.maxThrottleMilliseconds).contains(period) else {
                throw ScenarioError("throttle is a period from 1ms to 1h, or off")
            }
            return .throttle(periodMilliseconds: period)
        default:
            guard arguments.isNull || arguments.objectValue?.isEmpty == true else {
                throw ScenarioError("networkChange takes no arguments: write {}")
            }
            return .networkChange
        }
    }

    /// A device event's `args`: `dns {"fail": N | true | false, "error"?: "notFound" | "temporary"}`, `sleep {"ms": N}`,
    /// `throttle {"periodMs": N}` (0 ends it), `networkChange {}`. Every key is checked.
    static func driverDeviceEvent(_ name: String, _ args: JSONValue) -> Result<DeviceEvent, DriverError> {
        let keys: [String: [String]] = ["dns": ["fail", "error"], "sleep": ["ms"], "throttle": ["periodMs"]]
        guard let object = args.objectValue else { return .failure(.badArguments("\(name) needs an object of args")) }
        let allowed = keys[name] ?? []
        if let stray = object.keys.first(where: { !allowed.contains($0) }) {
            let only = allowed.map { "'\($0)'" }.joined(separator: " and ")
            return .failure(.badArguments("\(name) takes no '\(stray)'" + (allowed.isEmpty ? "" : ", only \(only)")))
        }
        func integer(_ key: String, _ range: ClosedRange<Int64>) -> Result<Int64, DriverError> {
            guard let value = args[key]?.intValue, range.contains(value) else {
                return .failure(.badArguments("\(name) needs '\(key)': an integer from \(range.lowerBound) to \(range.upperBound)"))
            }
            return .success(value)
        }
        switch name {
        case "dns":
            guard let kind = dnsKind(args["error"]) else {
                return .failure(.badArguments("dns needs 'error': one of \(dnsKinds)"))
            }
            if let flag = args["fail"]?.boolValue { return .success(.dnsFailure(attempts: flag ? nil : 0, kind: kind)) }
            return integer("fail", 0...1_000_000).map { .dnsFailure(attempts: Int($0), kind: kind) }
        case "sleep": return integer("ms", 1...DeviceEvent.maxSleepMilliseconds).map { .sleep(milliseconds: $0) }
        case "throttle": return integer("periodMs", 0...DeviceEvent.maxThrottleMilliseconds).map { .throttle(periodMilliseconds: $0) }
        default: return .success(.networkChange)
        }
    }
}
