import ChatProtocol
@testable import ProtocolFuzzer
import Testing

/// Histories are reproducible from their seed and always make sense to the model.
@Suite struct HistoryGeneratorTests {
    let generator = HistoryGenerator(roster: .embedded())

    @Test func theSameSeedGivesTheSameHistory() {
        let first = generator.generate(seed: 42, length: 300)
        let second = generator.generate(seed: 42, length: 300)
        #expect(first == second)
        #expect(first.actions.count == 300)
        #expect(generator.generate(seed: 43, length: 300) != first)
    }

    @Test func everyGeneratedActionCanHappen() {
        for seed in UInt64(1)...5 {
            let history = generator.generate(seed: seed, length: 400)
            var model = ReferenceModel(roster: .embedded(), settings: history.settings)
            for action in history.actions {
                let applied = model.apply(action)
                #expect(applied, "seed \(seed): \(action)")
            }
        }
    }

    @Test func historiesCoverTheInterestingCases() {
        var kinds: [String: Int] = [:]
        var multiDevice = false, kicks = 0, timeouts = 0
        for seed in UInt64(1)...10 {
            let history = generator.generate(seed: seed, length: 300)
            var model = ReferenceModel(roster: .embedded(), settings: history.settings)
            for action in history.actions {
                kinds[action.kindName, default: 0] += 1
                model.apply(action)
                let uids = model.live.compactMap(\.uid)
                if Set(uids).count < uids.count { multiDevice = true }
            }
            kicks += model.wires.values.filter { $0.closeCode == 4001 }.count
            timeouts += model.wires.values.filter { $0.closeCode == 4002 }.count
        }
        for kind in ["connect", "open", "login", "ping", "logout", "close", "drop", "advance", "faultDrop", "blackhole", "setApp"] {
            #expect(kinds[kind, default: 0] > 0, "no \(kind) in ten histories")
        }
        #expect(multiDevice)
        #expect(kicks > 0)
        #expect(timeouts > 0)
    }

    @Test func actionsBecomeScenarioSteps() throws {
        let history = generator.generate(seed: 7, length: 50)
        let built = try HistoryScenario(history: history, roster: .embedded(), id: "t/1", title: "t")
        #expect(built.actions == history.actions)
        #expect(built.scenario.steps.count == built.rawSteps.count)
        #expect(built.checkOfStep.contains { $0 == .state })
        let short = try HistoryScenario(history: history, roster: .embedded(), id: "t/2", title: "t", checks: .lastStep)
        #expect(short.checkOfStep.compactMap { $0 }.count <= 4)
    }
}
