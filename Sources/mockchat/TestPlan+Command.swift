import ArgumentParser
import ConformanceHarness
import Foundation

extension TestPlan {
    /// The plan for a command's PATH arguments; a file that cannot be read or a filter that
    /// matches nothing is printed as `mockchat COMMAND: ...` and ends the command with 1.
    static func forCommand(_ command: String, paths: [String], filter: String?,
                           expectedFailuresFile: String? = nil) throws -> TestPlan {
        do {
            return try TestPlan.make(paths: paths, filter: filter, expectedFailuresFile: expectedFailuresFile)
        } catch {
            FileHandle.standardError.write(Data("mockchat \(command): \(error.description)\n".utf8))
            throw ExitCode(1)
        }
    }
}
