// Writes one Swift file that carries the text of other files, so the binary needs no
// files around it. The EmbedFixtures plugin runs it at build time; nothing generated is
// kept in git.
//
//   FileEmbedder OUTPUT ENUM ACCESS members SOURCE KEY=PATH...
//   FileEmbedder OUTPUT ENUM ACCESS dictionary|list SOURCE FOLDER SUFFIX...
//
// `members`: one `static let KEY` per file. `dictionary`: `files: [String: String]`, the
// files directly in FOLDER that match a SUFFIX, by name without the suffix. `list`:
// `files: [(path: String, text: String)]`, the files anywhere below FOLDER that match a
// SUFFIX, by path relative to FOLDER, in byte order. A SUFFIX starting with a dot is
// matched against the end of a name, any other against the whole name. SOURCE names the
// files in the header. Each text is the file without its last line break. The folder is
// read here, not by the plugin, so a file added since the build was planned is included.
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FileEmbedder: \(message)\n".utf8))
    exit(1)
}

/// `text` as a Swift string literal, every byte kept.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// The text of the file at `path`, without its last line break.
func read(_ path: String) -> String {
    guard let data = FileManager.default.contents(atPath: path) else { fail("\(path): cannot read") }
    guard let text = String(data: data, encoding: .utf8) else { fail("\(path): not UTF-8") }
    return text.hasSuffix("\n") ? String(text.dropLast()) : text
}

/// The regular files below `folder` (directly in it unless `deep`) whose names end in
/// one of `suffixes`, as paths relative to `folder`, in byte order.
func files(in folder: String, deep: Bool, suffixes: [String]) -> [String] {
    let manager = FileManager.default
    let all: [String]
    do {
        all = deep ? try manager.subpathsOfDirectory(atPath: folder) : try manager.contentsOfDirectory(atPath: folder)
    } catch {
        fail("\(folder): \(error)")
    }
    return all.filter { relative in
        var isFolder: ObjCBool = false
        let name = relative.split(separator: "/").last.map(String.init) ?? relative
        return suffixes.contains { $0.hasPrefix(".") ? name.hasSuffix($0) : name == $0 }
            && manager.fileExists(atPath: folder + "/" + relative, isDirectory: &isFolder) && !isFolder.boolValue
    }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 5, ["members", "dictionary", "list"].contains(arguments[3]) else {
    fail("usage: FileEmbedder OUTPUT ENUM ACCESS members|dictionary|list SOURCE ARGUMENT...")
}
let (output, name, access, shape, source) = (arguments[0], arguments[1], arguments[2], arguments[3], arguments[4])
let rest = Array(arguments.dropFirst(5))

var swift = "// Generated at build time by FileEmbedder from \(source). Edit those files, not this one.\n\n"
swift += "/// The text of \(source), compiled into the binary.\n\(access) enum \(name) {\n"
switch shape {
case "members":
    for pair in rest {
        guard let equals = pair.firstIndex(of: "=") else { fail("\(pair): expected KEY=PATH") }
        swift += "    \(access) static let \(pair[..<equals]) = \(literal(read(String(pair[pair.index(after: equals)...]))))\n"
    }
case "dictionary":
    guard let folder = rest.first else { fail("dictionary needs a FOLDER") }
    let suffixes = Array(rest.dropFirst())
    swift += "    \(access) static let files: [String: String] = [\n"
    for file in files(in: folder, deep: false, suffixes: suffixes) {
        let key = suffixes.first { file.hasSuffix($0) }.map { String(file.dropLast($0.count)) } ?? file
        swift += "        \(literal(key)): \(literal(read(folder + "/" + file))),\n"
    }
    swift += "    ]\n"
default:
    guard let folder = rest.first else { fail("list needs a FOLDER") }
    swift += "    \(access) static let files: [(path: String, text: String)] = [\n"
    for file in files(in: folder, deep: true, suffixes: Array(rest.dropFirst())) {
        swift += "        (\(literal(file)), \(literal(read(folder + "/" + file)))),\n"
    }
    swift += "    ]\n"
}
swift += "}\n"
do {
    try Data(swift.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
} catch {
    fail("\(output): \(error)")
}
