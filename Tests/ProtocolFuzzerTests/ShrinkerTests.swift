import ChatProtocol
@testable import ConformanceHarness
@testable import ProtocolFuzzer
import Testing

/// Delta debugging finds small failing inputs.
@Suite struct ShrinkerTests {
    @Test func aListShrinksToTheElementsThatMatter() {
        let input = Array(0..<200)
        var shrinker = Shrinker<Int>(budgetSeconds: 30)
        let result = shrinker.minimize(input) { candidate in
            guard let three = candidate.firstIndex(of: 37), candidate[three...].contains(151) else { return nil }
            return candidate
        }
        #expect(result == [37, 151])
        #expect(shrinker.tests < 200)
    }

    @Test func aSyntheticFailingHistoryShrinksToAFewActions() {
        // "Fails" when some client has seen bob go offline: a stand-in for a server bug
        // about offline events, judged by the model alone so the test needs no server.
        let roster = Roster.embedded()
        let generator = HistoryGenerator(roster: roster)
        let history = (UInt64(1)...50).lazy.map { generator.generate(seed: $0, length: 150) }.first { history in
            Self.seesBobOffline(history.actions, settings: history.settings, roster: roster)
        }!
        var shrinker = Shrinker<FuzzAction>(budgetSeconds: 30)
        let result = shrinker.minimize(history.actions) { candidate in
            Self.seesBobOffline(candidate, settings: history.settings, roster: roster) ? candidate : nil
        }
        #expect(Self.seesBobOffline(result, settings: history.settings, roster: roster))
        #expect(result.count <= 4, "\(result)")
    }

    @Test func testingCandidatesInParallelGivesTheSequentialResult() {
        let input = Array(0..<120)
        let fails: @Sendable ([Int]) -> [Int]? = { candidate in
            candidate.contains(7) && candidate.contains(90) && candidate.filter { $0 % 11 == 0 }.count >= 3 ? candidate : nil
        }
        var sequential = Shrinker<Int>(budgetSeconds: 30)
        var parallel = Shrinker<Int>(budgetSeconds: 30)
        let expected = sequential.minimize(input, test: fails)
        #expect(parallel.minimize(input, parallelism: 3, test: fails) == expected)
        #expect(expected.count == 5)
        #expect(parallel.tests >= sequential.tests)
    }

    @Test func theBudgetIsRespected() {
        var shrinker = Shrinker<Int>(budgetSeconds: 0)
        let input = Array(0..<50)
        #expect(shrinker.minimize(input) { $0.contains(3) ? $0 : nil } == input)
    }

    static func seesBobOffline(_ actions: [FuzzAction], settings: ReferenceModel.Settings, roster: Roster) -> Bool {
        var model = ReferenceModel(roster: roster, settings: settings)
        for action in actions { model.apply(action) }
        return model.wires.values.contains { $0.countsKnown && ($0.counts[.offline("bob")] ?? 0) > 0 }
    }
}
