import ChatProtocol
import Foundation
import MockChatCore

/// A shrunk input of the other ways in that showed a finding, kept as a JSON file so
/// that it is run again: `mockchat fuzz --mode inputs --replay FILE|FOLDER` (and so
/// `make fuzz-smoke`, over `Fixtures/input-regressions/`) runs every one and fails on
/// any finding, a crash included.
///
///     {"stage": "recording", "label": "recording/header start", "finding": "...",
///      "seed": 7, "index": 12, "text": "{\"format\":\"mockchat-trace\", ...}\n..."}
public struct InputRegression: Sendable, Equatable {
    /// Where the input goes: `control`, `recording`, `scenario`, `driverLine` or `flags`.
    public var stage: String
    /// The generator's label.
    public var label: String
    /// What was wrong when it was found.
    public var finding: String
    /// The campaign's seed and the input's index, to regenerate the original.
    public var seed: UInt64
    public var index: Int
    /// The input: a whole control request (head and body), a file's text, driver lines,
    /// or a command line with one argument per line.
    public var text: String

    public init(stage: String, label: String, finding: String, seed: UInt64, index: Int, text: String) {
        (self.stage, self.label, self.finding, self.seed, self.index, self.text) = (stage, label, finding, seed, index, text)
    }

    init(_ input: WireInput, finding: String, seed: UInt64, index: Int) {
        self.init(stage: input.stage.rawValue, label: input.label, finding: finding, seed: seed, index: index,
                  text: String(decoding: input.bytes, as: UTF8.self))
    }

    /// The input to run again.
    var input: WireInput? {
        guard let stage = WireInput.Stage(rawValue: stage),
              ![.handshake, .frames, .message].contains(stage) else { return nil }
        return WireInput(stage: stage, label: label, bytes: Array(text.utf8), expectation: .reply)
    }

    public var json: JSONValue {
        ["stage": .string(stage), "label": .string(label), "finding": .string(finding),
         "seed": .string(String(seed)), "index": .integer(Int64(index)), "text": .string(text)]
    }

    public init(json: JSONValue, file: String) throws(FuzzInputError) {
        guard let stage = json["stage"]?.stringValue, let label = json["label"]?.stringValue,
              let text = json["text"]?.stringValue else {
            throw FuzzInputError("\(file): a regression needs 'stage', 'label' and 'text' (strings)")
        }
        self.init(stage: stage, label: label, finding: json["finding"]?.stringValue ?? "",
                  seed: json["seed"]?.stringValue.flatMap { UInt64($0) } ?? 0, index: Int(json["index"]?.intValue ?? 0), text: text)
        guard input != nil else { throw FuzzInputError("\(file): unknown stage '\(stage)' (control, recording, scenario, driverLine, flags)") }
    }

    /// The file name: the stage and a hash of the text, so the same input is one file.
    public var fileName: String {
        "input-\(stage)-\(String(FNV1a64.hash(text), radix: 16)).json"
    }

    /// Writes the file into `folder` (created when missing); returns its path.
    public func write(to folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = (folder as NSString).appendingPathComponent(fileName)
        try (json.description + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The regressions in `path`: one file, or every `*.json` file of a folder, by name.
    public static func load(_ path: String) throws(FuzzInputError) -> [(file: String, regression: InputRegression)] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw FuzzInputError("\(path): no such file or folder")
        }
        let files = isFolder.boolValue
            ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
                .map { (path as NSString).appendingPathComponent($0) }
            : [path]
        var loaded: [(file: String, regression: InputRegression)] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file), let json = try? JSONParser.parse(Array(data)) else {
                throw FuzzInputError("\(file): not a JSON file")
            }
            loaded.append((file, try InputRegression(json: json, file: file)))
        }
        return loaded
    }
}

/// A regression file that cannot be read, or an input that cannot be replayed.
public struct FuzzInputError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
