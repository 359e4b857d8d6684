import ChatProtocol
@testable import ConformanceHarness
@testable import ProtocolFuzzer
import Testing

/// Written scenarios read back as the same steps.
@Suite struct ScenarioWriterTests {
    @Test func aWrittenHistoryLoadsBackStepForStep() throws {
        let history = HistoryGenerator(roster: .embedded()).generate(seed: 11, length: 60)
        let built = try HistoryScenario(history: history, roster: .embedded(), id: "regressions/fuzz-11", title: "t: [x]")
        let text = ScenarioWriter.yaml(id: built.scenario.id, title: built.scenario.title, source: built.scenario.source,
                                       app: built.scenario.app, seed: history.seed, steps: built.rawSteps,
                                       comments: ["a comment"])
        let loaded = try ScenarioLoader.load(text)
        #expect(loaded.id == "regressions/fuzz-11")
        #expect(loaded.title == "t: [x]")
        #expect(loaded.seed == history.seed)
        #expect(loaded.steps.count == built.rawSteps.count)
        for (step, raw) in zip(loaded.steps, built.rawSteps) { #expect(step.text == raw.description) }
    }

    @Test func stringsThatYAMLWouldReadOtherwiseAreQuoted() {
        #expect(ScenarioWriter.scalar("bob-phone") == "bob-phone")
        #expect(ScenarioWriter.scalar("30s") == "30s")
        #expect(ScenarioWriter.scalar("1500ms") == "1500ms")
        for text in ["yes", "off", "null", "42", "1.5", "", "a b", "x: y", "#", "-"] {
            #expect(ScenarioWriter.scalar(text).hasPrefix("\""), "\(text)")
        }
    }
}
