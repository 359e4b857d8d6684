import MockChatCore
import Testing

/// `HostSystem.returnFreedMemory` (what `POST /control/reset` calls after emptying the
/// trace) really hands freed heap memory back to the system.
@Suite("Freed memory")
struct FreedMemoryTests {
    /// This process's resident set, from /proc/self/statm.
    static func residentBytes() -> Int {
        guard let file = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(file) }
        var size = 0, resident = 0
        withUnsafeMutablePointer(to: &size) { size in
            withUnsafeMutablePointer(to: &resident) { resident in _ = withVaList([size, resident]) { vfscanf(file, "%ld %ld", $0) } }
        }
        return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Fails before the trim was compiled in (`__GLIBC__` was tested before any C library
    /// header had defined it): 0 MiB came back.
    @Test func freedHeapMemoryGoesBackToTheSystem() {
        // 64 MiB in 4 KiB blocks (the size of a trace entry's text), below the mmap
        // threshold, so they come from the heap. Every 16th stays allocated, as the
        // server's long-lived allocations do between trace entries: the heap cannot
        // shrink from its top, and only a trim gives the pages between them back.
        let blocks = (0..<16_384).map { _ -> UnsafeMutableRawPointer in
            let block = malloc(4_096)!
            memset(block, 1, 4_096)
            return block
        }
        let kept = stride(from: 0, to: blocks.count, by: 16).map { blocks[$0] }
        for (index, block) in blocks.enumerated() where index % 16 != 0 { free(block) }
        let freed = Self.residentBytes()
        HostSystem.returnFreedMemory()
        let returned = freed - Self.residentBytes()
        kept.forEach { free($0) }
        print("freed memory: 60 MiB of 4 KiB blocks freed between kept ones; "
              + "\(returned >> 20) MiB returned to the system by returnFreedMemory")
        #expect(returned > 40 << 20)
    }
}
