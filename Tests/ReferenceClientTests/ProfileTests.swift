import Foundation
import Testing
@testable import ReferenceClient

/// The real profile files load, cite a source for every value, and say what the documents say.
@Suite struct ProfileTests {
    @Test func cometChatProfileMatchesTheDocuments() throws {
        let profile = try Profile.load(named: "cometchat-ios", in: Fixtures.profilesDirectory)
        #expect(profile.name == "cometchat-ios")
        #expect(profile.defaultAutoMode)
        #expect(profile.backgroundWithoutServices == .disconnectAtOnce)
        #expect(profile.backgroundTaskWindow == 30)
        #expect(profile.backgroundDisconnectAfter == nil)
        #expect(!profile.pingAvailableInAutoMode)
        #expect(profile.keepAliveInterval == 10)
        #expect(profile.pongTimeout == 10)
        #expect(!profile.retryLoginUntilAnswered)
        #expect(profile.sources["reconnectBackoff"]?.hasPrefix("project choice") == true)
    }

    @Test func nexconnProfileMatchesTheDocuments() throws {
        let profile = try Profile.load(named: "nexconn-ios", in: Fixtures.profilesDirectory)
        #expect(profile.backgroundWithoutServices == .disconnectAfterDelay)
        #expect(profile.backgroundDisconnectAfter == 120)
        #expect(profile.backgroundTaskWindow == nil)
        #expect(profile.retryLoginUntilAnswered)
        #expect(!profile.defaultReconnectKickEnable)
        #expect(profile.resetBackoffOnForeground && profile.resetBackoffOnNetworkChange)
        #expect(profile.sources["reconnectBackoff"] == "003_679c9ad3fd31654b.txt, Reconnection intervals")
    }

    @Test(arguments: ["cometchat-ios", "nexconn-ios"])
    func everyValueCitesASource(name: String) throws {
        let profile = try Profile.load(named: name, in: Fixtures.profilesDirectory)
        #expect(profile.problems == [])
        for field in Profile.sourcedFields {
            let source = try #require(profile.sources[field])
            #expect(source.contains(".txt, ") || source.hasPrefix("project choice: "), "\(field): \(source)")
        }
    }

    @Test(arguments: ["cometchat-ios", "nexconn-ios"])
    func backoffScheduleIsTheDocumentedOne(name: String) throws {
        let backoff = try Profile.load(named: name, in: Fixtures.profilesDirectory).reconnectBackoff
        let delays = (0..<11).map { backoff.delayMilliseconds(afterFailures: $0) }
        #expect(delays == [50, 250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 64_000])
    }

    @Test func aValueWithoutSourceIsRejected() throws {
        let url = Fixtures.profilesDirectory.appendingPathComponent("nexconn-ios.yaml")
        let text = try String(contentsOf: url, encoding: .utf8)
        let stripped = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("  pongTimeout:") }.joined(separator: "\n")
        let error = #expect(throws: ProfileError.self) { try Profile.decode(yaml: stripped) }
        #expect(error?.problems == ["field 'pongTimeout' has no entry in 'sources'"])
    }

    /// A duration past what a timer takes is a problem of the profile, named with its
    /// field (before the check, converting it to milliseconds trapped).
    @Test func aDurationOutOfRangeNamesItsField() throws {
        let url = Fixtures.profilesDirectory.appendingPathComponent("nexconn-ios.yaml")
        let text = try String(contentsOf: url, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let huge = lines.map { $0.hasPrefix("pongTimeout:") ? "pongTimeout: 1e308" : String($0) }.joined(separator: "\n")
        #expect(huge != text)
        let error = #expect(throws: ProfileError.self) { try Profile.decode(yaml: huge) }
        #expect(error?.problems.contains { $0.contains("pongTimeout") && $0.contains("1e+308") } == true,
                "\(String(describing: error?.problems))")
    }

    @Test func malformedYamlIsAnErrorValue() {
        #expect(throws: ProfileError.self) { try Profile.decode(yaml: "name: [unclosed") }
        #expect(throws: ProfileError.self) { try Profile.load(named: "no-such-profile", in: Fixtures.profilesDirectory) }
    }
}

/// A profile file that does not decode says which field, what it must be, and where.
@Suite struct ProfileDecodingErrorTests {
    /// The CometChat profile with `line` (1-based) replaced, or removed when `with` is nil.
    private func cometChat(replacingLine line: Int, with replacement: String?) throws -> String {
        let url = Fixtures.profilesDirectory.appendingPathComponent("cometchat-ios.yaml")
        var lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        if let replacement { lines[line - 1] = replacement } else { lines.remove(at: line - 1) }
        return lines.joined(separator: "\n")
    }

    private func message(_ yaml: String) -> String? {
        let error = #expect(throws: ProfileError.self) { try Profile.decode(yaml: yaml, origin: "cometchat-ios.yaml") }
        return error?.description
    }

    @Test func aWrongTypeNamesTheFieldTheTypeAndTheLine() throws {
        #expect(message(try cometChat(replacingLine: 9, with: "keepAliveInterval: abc"))
            == #"cometchat-ios.yaml:9:20: 'keepAliveInterval' must be a number, found "abc""#)
        #expect(message(try cometChat(replacingLine: 12, with: "  steps: [0.05, 0.25, soon]"))
            == #"cometchat-ios.yaml:12:23: 'reconnectBackoff.steps[2]' must be a number, found "soon""#)
    }

    @Test func anUnknownChoiceListsTheAllowedOnes() throws {
        #expect(message(try cometChat(replacingLine: 5, with: "backgroundWithoutServices: sometimes"))
            == #"cometchat-ios.yaml:5:28: 'backgroundWithoutServices' must be one of 'disconnectAtOnce', 'disconnectAfterDelay', found "sometimes""#)
    }

    @Test func aMissingFieldIsNamedWhereItBelongs() throws {
        #expect(message(try cometChat(replacingLine: 10, with: nil))
            == "cometchat-ios.yaml:3:1: missing required field 'pongTimeout'")
        #expect(message(try cometChat(replacingLine: 13, with: nil))
            == "cometchat-ios.yaml:12:3: missing required field 'reconnectBackoff.repeatEvery'")
    }

    @Test func aSyntaxErrorGivesItsLine() throws {
        #expect(message(try cometChat(replacingLine: 4, with: "defaultAutoMode: [true"))
            == "cometchat-ios.yaml:5:26: not valid YAML: did not find expected ',' or ']' while parsing a flow sequence (opened at 4:18)")
    }

    @Test func anUnknownExtraKeyIsIgnored() throws {
        let profile = try Profile.decode(yaml: try cometChat(replacingLine: 4, with: "defaultAutoMode: true\ncolour: blue"))
        #expect(profile.name == "cometchat-ios")
    }
}
