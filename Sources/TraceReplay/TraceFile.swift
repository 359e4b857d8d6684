import ChatProtocol
import ConformanceHarness
import Foundation
import MockChatCore
import MockChatServer

/// A problem with a trace file, at `file:line`.
public struct TraceError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var file: String
    /// 1-based; nil for the file as a whole.
    public var line: Int?

    public init(_ message: String, file: String, line: Int? = nil) {
        self.message = message
        self.file = file
        self.line = line
    }

    /// `file:line: message`.
    public var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
}

/// A trace file written by `mockchat serve --record FILE` (or `--trace FILE`), read
/// and checked line by line: the header (format, version, clock, start, fixtures),
/// then one entry per line (docs/PROTOCOL.md, "Trace").
///
/// Control payloads written beside the trace (`{"file": NAME}`) are read back into
/// their entries, so a reader sees every entry whole.
public struct TraceFile: Sendable {
    /// One entry and the line it was on.
    public struct Line: Sendable {
        public var number: Int
        public var entry: TraceLog.Entry
        /// The entry's time (`t`) in milliseconds since the header's `start`.
        public var at: Int64
    }

    public var path: String
    /// `virtual` or `system`.
    public var clock: String
    /// The clock reading when the server started, in Unix seconds.
    public var start: Double
    /// `{"users": [...], "app": {...}}` the server started with.
    public var fixtures: JSONValue
    public var lines: [Line]

    static let kinds = Set(TraceLog.Kind.allCases.map(\.rawValue))
    /// The kinds that belong to a connection and name it in `conn`.
    static let connectionKinds: Set<String> = ["open", "in", "out", "close"]

    /// Reads and checks the file at `path`.
    public static func load(path: String) throws(TraceError) -> TraceFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TraceError("cannot read the file", file: path)
        }
        return try parse(String(decoding: data, as: UTF8.self), path: path)
    }

    /// Checks `text`, the contents of the trace file at `path` (beside files are looked
    /// up next to `path`).
    public static func parse(_ text: String, path: String) throws(TraceError) -> TraceFile {
        var rows = text.split(separator: "\n", omittingEmptySubsequences: false)
        let complete = text.hasSuffix("\n")
        if complete { rows.removeLast() }
        guard let first = rows.first, !first.isEmpty else {
            throw TraceError("empty file; a trace starts with its header line", file: path, line: 1)
        }
        let header = try json(first, number: 1, path: path, truncated: rows.count == 1 && !complete)
        guard header["format"]?.stringValue == "mockchat-trace" else {
            throw TraceError("not a MockChat trace: the first line is not the header "
                + #"({"format":"mockchat-trace",...}); record one with `mockchat serve --record FILE`"#, file: path, line: 1)
        }
        guard let version = header["version"]?.intValue, version == Int64(TraceLog.formatVersion) else {
            throw TraceError("trace format version \(header["version"]?.description ?? "missing"); "
                + "this mockchat reads version \(TraceLog.formatVersion)", file: path, line: 1)
        }
        guard let clock = header["clock"]?.stringValue, let start = header["start"]?.doubleValue else {
            throw TraceError("the header lacks 'clock' or 'start'", file: path, line: 1)
        }
        do {
            _ = try BoundedNumber.check(start, "'start'", in: 0...BoundedNumber.latestSeconds, unit: "Unix seconds")
        } catch {
            throw TraceError(error.description, file: path, line: 1)
        }
        var trace = TraceFile(path: path, clock: clock, start: start, fixtures: header["fixtures"] ?? .null, lines: [])
        for (offset, row) in rows.enumerated().dropFirst() {
            let number = offset + 1
            var entry = try json(row, number: number, path: path, truncated: offset == rows.count - 1 && !complete)
            guard entry["seq"]?.intValue != nil, let time = entry["t"]?.doubleValue else {
                throw TraceError("an entry needs 'seq' and 't'", file: path, line: number)
            }
            let at: Int64
            do {
                // Within the longest wait a scenario can replay, from the header's start.
                let checked = try BoundedNumber.check(time, "'t'", in: start...(start + ScenarioLoader.maxDurationSeconds),
                                                      unit: "Unix seconds")
                at = try BoundedNumber.milliseconds(seconds: checked - start, "'t'", in: 0...ScenarioLoader.maxDurationSeconds)
            } catch {
                throw TraceError(error.description, file: path, line: number)
            }
            guard let kind = entry["kind"]?.stringValue, kinds.contains(kind) else {
                throw TraceError("unknown kind \(entry["kind"]?.description ?? "(missing)") "
                    + "(known: \(kinds.sorted().joined(separator: ", ")))", file: path, line: number)
            }
            if connectionKinds.contains(kind), entry["conn"]?.stringValue?.isEmpty != false {
                throw TraceError("an '\(kind)' entry needs 'conn', the connection's id as a string", file: path, line: number)
            }
            if kind == "control", let name = entry["frame"]?["file"]?.stringValue, entry["frame"]?.objectValue?.count == 1 {
                entry = try attached(name, to: entry, number: number, path: path)
            }
            do {
                trace.lines.append(Line(number: number, entry: try TraceLog.Entry(json: entry), at: at))
            } catch {
                throw TraceError(error.description, file: path, line: number)
            }
        }
        return trace
    }

    private static func json(_ row: Substring, number: Int, path: String, truncated: Bool) throws(TraceError) -> JSONValue {
        do {
            return try JSONParser.parse(Array(row.utf8))
        } catch {
            let hint = truncated ? " (the last line is cut short: was the server still writing?)" : ""
            throw TraceError("not valid JSON: \(error)\(hint)", file: path, line: number)
        }
    }

    /// The entry with its `{"file": NAME}` payload replaced by the contents of NAME,
    /// which lives beside the trace.
    private static func attached(_ name: String, to entry: JSONValue, number: Int, path: String) throws(TraceError) -> JSONValue {
        let folder = (path as NSString).deletingLastPathComponent
        let beside = folder.isEmpty ? name : (folder as NSString).appendingPathComponent(name)
        guard !name.contains("/"), let data = FileManager.default.contents(atPath: beside) else {
            throw TraceError("the control payload '\(name)' is not beside the trace", file: path, line: number)
        }
        var bytes = Array(data)
        while bytes.last == 10 { bytes.removeLast() }
        guard let payload = try? JSONParser.parse(bytes) else {
            throw TraceError("the control payload '\(name)' is not valid JSON", file: path, line: number)
        }
        var object = entry.objectValue ?? JSONObject()
        object["frame"] = payload
        return .object(object)
    }
}
