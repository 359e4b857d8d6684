/// A history waiting to run, possibly a continuation of one that diverged.
struct PendingRun: Sendable {
    /// The history's number in the run (continuations keep it).
    var number: Int
    var history: History
    var built: HistoryScenario
    /// Actions at the start already checked by an earlier run of this history.
    var verified = 0
    /// How many times the history has been continued.
    var continued = 0

    /// The same history without the action that showed `divergence`, checked from that
    /// point on; nil when nothing would be left to check or the limit is reached.
    func continuing(after divergence: Divergence, roster: Roster, limit: Int) -> PendingRun? {
        guard continued < limit, divergence.action + 1 < built.actions.count else { return nil }
        var actions = built.actions
        actions.remove(at: divergence.action)
        let next = History(seed: history.seed, settings: history.settings, actions: actions)
        guard let rebuilt = try? HistoryScenario(history: next, roster: roster, id: built.scenario.id,
                                                 title: built.scenario.title) else { return nil }
        return PendingRun(number: number, history: next, built: rebuilt, verified: divergence.action,
                          continued: continued + 1)
    }
}
