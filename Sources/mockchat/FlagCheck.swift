import ArgumentParser
import MockChatCore

/// Runs the range checks of a command's numeric flags (`BoundedNumber`), from its
/// `validate()`: a number out of range, NaN or infinite becomes a usage error naming the
/// flag (exit 64) before anything converts it.
func checkFlags(_ checks: () throws(BoundedNumberError) -> Void) throws {
    do throws(BoundedNumberError) {
        try checks()
    } catch {
        throw ValidationError(error.description)
    }
}
