import Foundation

extension WireFuzzer {
    /// Input `index` of this campaign, as a regression (nothing found yet).
    public func regression(index: Int) -> InputRegression {
        var random = FuzzRandom(seed: Self.inputSeed(options.seed, index: index))
        return InputRegression(make(&random), finding: "", seed: options.seed, index: index)
    }

    /// Runs each regression again on one in-process server, as the campaign ran it; what
    /// each one showed (nothing when it passes). A crash ends the process, its note
    /// naming the file.
    public func replay(_ regressions: [(file: String, regression: InputRegression)]) throws(FuzzInputError) -> [[String]] {
        CrashNote.install
        let runner: WireRunner
        do {
            runner = try WireRunner(seed: options.seed, roster: roster)
        } catch {
            throw FuzzInputError("cannot start a server: \(error)")
        }
        defer {
            CrashNote.clear(0)
            runner.shutdown()
        }
        runner.surfaces = options.surfaces
        if let failure = runner.startControl() { throw FuzzInputError(failure) }
        return regressions.map { file, regression in
            CrashNote.set(0, "the regression \(file) (\(regression.label))")
            guard let input = regression.input else { return ["unknown stage '\(regression.stage)'"] }
            return runner.run(input, deadlineTest: false)
        }
    }

    /// `regression` shrunk while `shows` says a candidate still shows the finding (for a
    /// crash: a child process replaying it dies of a signal).
    public static func shrink(_ regression: InputRegression, budgetSeconds: Double,
                              shows: (InputRegression) -> Bool) -> (regression: InputRegression, tests: Int) {
        guard let input = regression.input else { return (regression, 0) }
        var shrinker = InputShrinker(budgetSeconds: budgetSeconds)
        let smaller = shrinker.shrink(input) { candidate in
            shows(InputRegression(candidate, finding: regression.finding, seed: regression.seed, index: regression.index))
        }
        return (InputRegression(smaller, finding: regression.finding, seed: regression.seed, index: regression.index), shrinker.tests)
    }

    /// A finding of the campaign shrunk on the worker's own runner (the same kind of
    /// problem on the same way in) and written to the output folder; the line that says
    /// so, or nil for the wire's own stages.
    func shrinkFinding(_ input: WireInput, problem: String, index: Int, runner: WireRunner) -> String? {
        guard options.shrinkBudgetSeconds > 0, let original = InputRegression(input, finding: problem, seed: options.seed, index: index).input
        else { return nil }
        let kind = Self.kind(of: problem)
        let found = InputRegression(original, finding: problem, seed: options.seed, index: index)
        let (shrunk, tests) = Self.shrink(found, budgetSeconds: options.shrinkBudgetSeconds) { candidate in
            guard let again = candidate.input else { return false }
            return runner.run(again, deadlineTest: false).first.map(Self.kind) == kind
        }
        guard let folder = options.outputFolder else { return "shrunk to \(shrunk.text.utf8.count) bytes in \(tests) tests" }
        do {
            return "shrunk to \(shrunk.text.utf8.count) bytes in \(tests) tests: \(try shrunk.write(to: folder))"
        } catch {
            return "shrunk to \(shrunk.text.utf8.count) bytes, not written: \(error)"
        }
    }
}
