#if canImport(Glibc)
import Glibc
#endif

/// What each worker of a campaign is running, written to stderr if the process dies of
/// a trap or a fault, so that a crash names its input (the seed is printed first):
/// `fuzz: crashed while running input 1234 (control/POST /control/reset field clock)`.
enum CrashNote {
    static let slots = 64, slotBytes = 240
    nonisolated(unsafe) private static let notes: UnsafeMutablePointer<CChar> = {
        let notes = UnsafeMutablePointer<CChar>.allocate(capacity: slots * slotBytes)
        notes.initialize(repeating: 0, count: slots * slotBytes)
        return notes
    }()
    nonisolated(unsafe) private static var previous: [Int32: sigaction] = [:]
    private static let signals = [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]

    /// Installs the handler once; the handler in place before it runs after it.
    static let install: Void = {
        _ = notes
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { number, _, _ in CrashNote.write(number) }
            action.sa_flags = SA_SIGINFO | SA_ONSTACK
            var old = sigaction()
            sigaction(number, &action, &old)
            previous[number] = old
        }
    }()

    /// Worker `slot` now runs `text` (cut to fit).
    static func set(_ slot: Int, _ text: String) {
        guard slot < slots else { return }
        let base = notes + slot * slotBytes
        var count = 0
        for byte in text.utf8.prefix(slotBytes - 2) {
            base[count] = CChar(bitPattern: byte)
            count += 1
        }
        base[count] = 10
        base[count + 1] = 0
    }

    /// Worker `slot` has finished: a crash after this is not its input's.
    static func clear(_ slot: Int) {
        guard slot < slots else { return }
        notes[slot * slotBytes] = 0
    }

    /// In the signal handler: only write(2), sigaction(2) and raise(3). The signal is raised
    /// again for the handler that was in place before (the runtime's backtrace): it is
    /// delivered when this one returns, also for an abort(3), which would otherwise end
    /// the process with the default action and no backtrace.
    private static func write(_ number: Int32) {
        let prefix = "fuzz: crashed while running "
        for slot in 0..<slots where notes[slot * slotBytes] != 0 {
            _ = prefix.withCString { Glibc.write(2, $0, strlen($0)) }
            _ = Glibc.write(2, notes + slot * slotBytes, strlen(notes + slot * slotBytes))
        }
        if var old = previous[number] { sigaction(number, &old, nil) } else { signal(number, SIG_DFL) }
        raise(number)
    }
}
