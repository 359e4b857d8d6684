import ConformanceHarness

/// `scenarios from-trace`: a recording read and turned into a scenario file that loads.
/// The command and the console's "save as scenario" both go through here.
public enum ScenarioFromTrace {
    /// The scenario made of `trace`, checked to load as any scenario file must.
    public static func make(_ trace: TraceFile, id: String? = nil, title: String? = nil, source: String,
                            made command: String) throws(TraceError) -> (yaml: String, steps: Int, actions: Int) {
        let recording = try RecordingReader.read(trace)
        let steps = recording.steps()
        let name = Self.name(trace.path)
        let text = recording.yaml(
            id: id ?? "regressions/recorded-\(name)", title: title ?? "Replay of the recording \(name)",
            source: source, steps: steps,
            comments: ["Made by `\(command) \(name)`: wire clients send the recorded frames at the",
                       "recorded times; each expect step holds what the server sent until the next action."])
        do {
            _ = try ScenarioLoader.load(text, path: "<output>")
        } catch {
            throw TraceError("the written scenario does not load (a bug): \(error)", file: trace.path)
        }
        return (text, steps.count, recording.actionIndices.count)
    }

    /// The file's name without folder or extension.
    public static func name(_ file: String) -> String {
        let base = String(file.split(separator: "/").last ?? Substring(file))
        return base.split(separator: ".").first.map(String.init) ?? base
    }
}
