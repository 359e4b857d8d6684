import ChatProtocol
import MockChatServer
import Testing

/// The device policy's golden table: one login against a user's other devices, and
/// what must happen. `DevicePolicyTests` checks `DevicePolicy.decide` against it, and
/// `DevicePolicyRedisTests` the cluster's claim script on a real redis-server, so one
/// node and the cluster follow the same rule.
struct DevicePolicyCase: CustomTestStringConvertible, Sendable {
    let name: String
    let mobileLimit: Int
    let clientKickControl: Bool
    /// The user's other devices, oldest first, as `node/connection` fields.
    let holders: [DevicePolicy.Holder<String>]
    let login: DevicePolicy.Login
    /// nil: refused.
    let displaced: [DevicePolicy.Displacement<String>]?

    var testDescription: String { name }

    var policy: DevicePolicy { DevicePolicy(mobileLimit: mobileLimit, clientKickControl: clientKickControl) }
    var expected: DevicePolicy.Decision<String> { displaced.map { .admitted(displacing: $0) } ?? .refused }
}

enum DevicePolicyGoldenTable {
    private static func mobile(_ field: String, _ device: String) -> DevicePolicy.Holder<String> {
        DevicePolicy.Holder(field, deviceId: device, platform: .mobile)
    }

    private static func desktop(_ field: String, _ device: String) -> DevicePolicy.Holder<String> {
        DevicePolicy.Holder(field, deviceId: device, platform: .desktop)
    }

    private static func phone(_ device: String, reconnect: Bool = false, kickEnable: Bool = false) -> DevicePolicy.Login {
        DevicePolicy.Login(deviceId: device, platform: .mobile, reconnect: reconnect, reconnectKickEnable: kickEnable)
    }

    private static func laptop(_ device: String) -> DevicePolicy.Login {
        DevicePolicy.Login(deviceId: device, platform: .desktop)
    }

    private static func kick(_ field: String, _ reason: DevicePolicy.Reason) -> DevicePolicy.Displacement<String> {
        DevicePolicy.Displacement(field, reason)
    }

    static let cases: [DevicePolicyCase] = [
        DevicePolicyCase(name: "first mobile, nothing to displace", mobileLimit: 1, clientKickControl: false,
                         holders: [], login: phone("p1"), displaced: []),
        DevicePolicyCase(name: "second mobile kicks the first (limit 1)", mobileLimit: 1, clientKickControl: false,
                         holders: [mobile("a/c1", "p1")], login: phone("p2"), displaced: [kick("a/c1", .mobileLimit)]),
        DevicePolicyCase(name: "desktops do not count against the mobile limit", mobileLimit: 1, clientKickControl: false,
                         holders: [desktop("a/c1", "d1"), desktop("b/c2", "d2")], login: phone("p1"), displaced: []),
        DevicePolicyCase(name: "a desktop login kicks no mobile", mobileLimit: 1, clientKickControl: false,
                         holders: [mobile("a/c1", "p1")], login: laptop("d1"), displaced: []),
        DevicePolicyCase(name: "the same device is displaced, whatever its platform", mobileLimit: 1, clientKickControl: false,
                         holders: [desktop("a/c1", "d1"), mobile("b/c2", "p1")], login: laptop("d1"),
                         displaced: [kick("a/c1", .sameDevice)]),
        DevicePolicyCase(name: "the same phone again displaces itself, not the slot", mobileLimit: 1, clientKickControl: false,
                         holders: [mobile("a/c1", "p1")], login: phone("p1"), displaced: [kick("a/c1", .sameDevice)]),
        DevicePolicyCase(name: "limit 2: second mobile kicks nothing", mobileLimit: 2, clientKickControl: false,
                         holders: [mobile("a/c1", "p1")], login: phone("p2"), displaced: []),
        DevicePolicyCase(name: "limit 2: third mobile kicks the oldest, wherever it is", mobileLimit: 2, clientKickControl: false,
                         holders: [mobile("b/c7", "p1"), mobile("a/c2", "p2")], login: phone("p3"),
                         displaced: [kick("b/c7", .mobileLimit)]),
        DevicePolicyCase(name: "limit 2: five mobiles (over the limit) shrink to two", mobileLimit: 2, clientKickControl: false,
                         holders: [mobile("a/c1", "p1"), mobile("b/c1", "p2"), mobile("c/c1", "p3"), mobile("a/c4", "p4")],
                         login: phone("p5"), displaced: [kick("a/c1", .mobileLimit), kick("b/c1", .mobileLimit),
                                                          kick("c/c1", .mobileLimit)]),
        DevicePolicyCase(name: "limit 2: same phone and the slot, the same device first", mobileLimit: 2,
                         clientKickControl: false,
                         holders: [mobile("a/c1", "p1"), mobile("b/c2", "p2"), desktop("c/c3", "p3"), mobile("c/c4", "p3")],
                         login: phone("p3"),
                         displaced: [kick("c/c3", .sameDevice), kick("c/c4", .sameDevice), kick("a/c1", .mobileLimit)]),
        DevicePolicyCase(name: "limit 3 with desktops between the mobiles", mobileLimit: 3, clientKickControl: false,
                         holders: [desktop("a/c1", "d1"), mobile("a/c2", "p1"), desktop("b/c3", "d2"), mobile("b/c4", "p2"),
                                   mobile("c/c5", "p3")],
                         login: phone("p4"), displaced: [kick("a/c2", .mobileLimit)]),
        DevicePolicyCase(name: "reconnect asking not to kick, control on: refused", mobileLimit: 1, clientKickControl: true,
                         holders: [mobile("a/c1", "p1")], login: phone("p2", reconnect: true, kickEnable: true),
                         displaced: nil),
        DevicePolicyCase(name: "refused login displaces not even its own device", mobileLimit: 1, clientKickControl: true,
                         holders: [mobile("a/c1", "p1"), desktop("b/c2", "p2")],
                         login: phone("p2", reconnect: true, kickEnable: true), displaced: nil),
        DevicePolicyCase(name: "reconnect asking not to kick, control off: kicks", mobileLimit: 1, clientKickControl: false,
                         holders: [mobile("a/c1", "p1")], login: phone("p2", reconnect: true, kickEnable: true),
                         displaced: [kick("a/c1", .mobileLimit)]),
        DevicePolicyCase(name: "not a reconnect: the flag alone does not refuse", mobileLimit: 1, clientKickControl: true,
                         holders: [mobile("a/c1", "p1")], login: phone("p2", kickEnable: true),
                         displaced: [kick("a/c1", .mobileLimit)]),
        DevicePolicyCase(name: "a reconnect without the flag kicks", mobileLimit: 1, clientKickControl: true,
                         holders: [mobile("a/c1", "p1")], login: phone("p2", reconnect: true),
                         displaced: [kick("a/c1", .mobileLimit)]),
        DevicePolicyCase(name: "asking not to kick within the limit is admitted", mobileLimit: 2, clientKickControl: true,
                         holders: [mobile("a/c1", "p1")], login: phone("p2", reconnect: true, kickEnable: true),
                         displaced: []),
        DevicePolicyCase(name: "asking not to kick, its own device only: admitted, displacing it", mobileLimit: 1,
                         clientKickControl: true, holders: [mobile("a/c1", "p1")],
                         login: phone("p1", reconnect: true, kickEnable: true), displaced: [kick("a/c1", .sameDevice)]),
        DevicePolicyCase(name: "limit 2, refused at the limit", mobileLimit: 2, clientKickControl: true,
                         holders: [mobile("a/c1", "p1"), mobile("b/c1", "p2")],
                         login: phone("p3", reconnect: true, kickEnable: true), displaced: nil),
    ]
}
