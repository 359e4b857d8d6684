import Foundation

/// `--trace-dir`: one scenario's full server trace and client logs as files.
enum TraceFiles {
    /// Writes `<id>.trace.jsonl` and `<id>.<client>.log` (slashes of the id become `__`).
    static func write(_ id: String, lines: [String], session: ScenarioSession, to folder: String) {
        let stem = folder + "/" + id.replacingOccurrences(of: "/", with: "__")
        try? (lines.joined(separator: "\n") + "\n").write(toFile: stem + ".trace.jsonl", atomically: true, encoding: .utf8)
        for name in session.names {
            let log = session.fullLog(of: name).map { String(format: "%9.3fs ", $0.at) + $0.line }
            try? (log.joined(separator: "\n") + "\n").write(toFile: "\(stem).\(name).log", atomically: true, encoding: .utf8)
        }
    }
}
