import ChatProtocol
import Foundation
import MockChatCore

extension Profile {
    /// Decodes a profile from YAML text and checks it (see ``problems``).
    public static func decode(yaml: String, origin: String = "profile") throws(ProfileError) -> Profile {
        let profile = try ProfileReader(origin: origin).read(yaml)
        let problems = profile.problems
        guard problems.isEmpty else { throw ProfileError(origin: origin, problems: problems) }
        return profile
    }

    /// Reads and checks one profile file.
    public static func load(contentsOf url: URL) throws(ProfileError) -> Profile {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw ProfileError(origin: url.path, problems: ["cannot read the file: \(error.localizedDescription)"])
        }
        return try decode(yaml: text, origin: url.lastPathComponent)
    }

    /// Reads `<directory>/<name>.yaml`, e.g. `load(named: "nexconn-ios", in: fixtures/profiles)`.
    public static func load(named name: String, in directory: URL) throws(ProfileError) -> Profile {
        try load(contentsOf: directory.appendingPathComponent("\(name).yaml"))
    }

    /// Everything that makes the profile unusable; empty when it is fine.
    public var problems: [String] {
        var found: [String] = []
        for field in Self.sourcedFields where (sources[field] ?? "").trimmingCharacters(in: .whitespaces).isEmpty {
            found.append("field '\(field)' has no entry in 'sources'")
        }
        for key in sources.keys.sorted() where !Self.sourcedFields.contains(key) {
            found.append("'sources' names an unknown field '\(key)'")
        }
        if name.isEmpty { found.append("'name' is empty") }
        if keepAliveInterval <= 0 { found.append("'keepAliveInterval' must be positive") }
        if pongTimeout <= 0 { found.append("'pongTimeout' must be positive") }
        if loginReplyTimeout <= 0 { found.append("'loginReplyTimeout' must be positive") }
        if openTimeout <= 0 { found.append("'openTimeout' must be positive") }
        if closeTimeout <= 0 { found.append("'closeTimeout' must be positive") }
        if callTimeout <= 0 { found.append("'callTimeout' must be positive") }
        if reconnectBackoff.steps.contains(where: { $0 < 0 }) || reconnectBackoff.repeatEvery <= 0 {
            found.append("'reconnectBackoff' needs non-negative steps and a positive 'repeatEvery'")
        }
        if backgroundWithoutServices == .disconnectAfterDelay, (backgroundDisconnectAfter ?? 0) <= 0 {
            found.append("'disconnectAfterDelay' needs a positive 'backgroundDisconnectAfter'")
        }
        if let window = backgroundTaskWindow, window <= 0 { found.append("'backgroundTaskWindow' must be positive") }
        for (field, code) in [("backgroundCloseCode", backgroundCloseCode), ("logoutCloseCode", logoutCloseCode),
                              ("disconnectCloseCode", disconnectCloseCode)] where CloseCode(rawValue: code) == nil {
            found.append("'\(field)' must be a close code the client can send: "
                         + CloseCode.allCases.map { String($0.rawValue) }.joined(separator: ", "))
        }
        // Every duration becomes whole milliseconds for a timer: checked before that
        // conversion, which traps on a value past Int64 (1e308, .inf).
        var durations: [(String, Double)] = [("keepAliveInterval", keepAliveInterval), ("pongTimeout", pongTimeout),
                                             ("loginReplyTimeout", loginReplyTimeout), ("openTimeout", openTimeout),
                                             ("closeTimeout", closeTimeout), ("callTimeout", callTimeout),
                                             ("reconnectBackoff.repeatEvery", reconnectBackoff.repeatEvery)]
        durations += reconnectBackoff.steps.enumerated().map { ("reconnectBackoff.steps[\($0.offset)]", $0.element) }
        if let after = backgroundDisconnectAfter { durations.append(("backgroundDisconnectAfter", after)) }
        if let window = backgroundTaskWindow { durations.append(("backgroundTaskWindow", window)) }
        for (field, seconds) in durations {
            do throws(BoundedNumberError) {
                _ = try BoundedNumber.check(seconds, field, in: -Self.longestDuration...Self.longestDuration, unit: "seconds")
            } catch {
                found.append(error.description)
            }
        }
        return found
    }
}

extension Profile {
    /// The profile with the fields named in `values` set to those values (an SDK's declared
    /// parameters, docs/SPECIFICATION.md); names that are not fields of a profile are left out.
    public func applying(_ values: [String: JSONValue]) throws(ProfileError) -> Profile {
        let fields = Set(Self.sourcedFields)
        let chosen = values.filter { fields.contains($0.key) }
        guard !chosen.isEmpty else { return self }
        do {
            guard case .object(var object) = try JSONParser.parse(Array(try JSONEncoder().encode(self))) else {
                throw ProfileError(origin: name, problems: ["cannot encode the profile"])
            }
            for (key, value) in chosen.sorted(by: { $0.key < $1.key }) { object[key] = value }
            var profile = try JSONDecoder().decode(Profile.self, from: Data(JSONValue.object(object).serialized().utf8))
            for key in chosen.keys { profile.sources[key] = "declared by the SDK's manifest" }
            let problems = profile.problems
            guard problems.isEmpty else { throw ProfileError(origin: name, problems: problems) }
            return profile
        } catch let error as ProfileError {
            throw error
        } catch {
            throw ProfileError(origin: name, problems: ["the declared values do not fit the profile: \(error)"])
        }
    }
}
