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

    /// `dns: {fail: N | true | false}`, `sleep: 90s`, `throttle: 60s | off`, `networkChange: {}`.
    static func scenarioDeviceEvent(_ method: String, _ arguments: JSONValue) throws(ScenarioError) -> DeviceEvent {
        switch method {
        case "dns":
            guard let object = arguments.objectValue, object.count == 1, let fail = object["fail"] else {
                throw ScenarioError("dns takes {fail: N} (the next N attempts), {fail: true} (until cleared) or {fail: false}")
            }
            if let flag = fail.boolValue { return .dnsFailure(attempts: flag ? nil : 0) }
            guard let count = fail.intValue, (1...1_000_000).contains(count) else {
                throw ScenarioError("dns fail is a number of attempts from 1 to 1000000, true or false")
            }
            return .dnsFailure(attempts: Int(count))
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

    /// A device event's `args`: `dns {"fail": N | true | false}`, `sleep {"ms": N}`,
    /// `throttle {"periodMs": N}` (0 ends it), `networkChange {}`. Every key is checked.
    static func driverDeviceEvent(_ name: String, _ args: JSONValue) -> Result<DeviceEvent, DriverError> {
        let keys: [String: String] = ["dns": "fail", "sleep": "ms", "throttle": "periodMs"]
        guard let object = args.objectValue else { return .failure(.badArguments("\(name) needs an object of args")) }
        let allowed = keys[name].map { [$0] } ?? []
        if let stray = object.keys.first(where: { !allowed.contains($0) }) {
            return .failure(.badArguments("\(name) takes no '\(stray)'" + (allowed.isEmpty ? "" : ", only '\(allowed[0])'")))
        }
        func integer(_ key: String, _ range: ClosedRange<Int64>) -> Result<Int64, DriverError> {
            guard let value = args[key]?.intValue, range.contains(value) else {
                return .failure(.badArguments("\(name) needs '\(key)': an integer from \(range.lowerBound) to \(range.upperBound)"))
            }
            return .success(value)
        }
        switch name {
        case "dns":
            if let flag = args["fail"]?.boolValue { return .success(.dnsFailure(attempts: flag ? nil : 0)) }
            return integer("fail", 0...1_000_000).map { .dnsFailure(attempts: Int($0)) }
        case "sleep": return integer("ms", 1...DeviceEvent.maxSleepMilliseconds).map { .sleep(milliseconds: $0) }
        case "throttle": return integer("periodMs", 0...DeviceEvent.maxThrottleMilliseconds).map { .throttle(periodMilliseconds: $0) }
        default: return .success(.networkChange)
        }
    }
}
