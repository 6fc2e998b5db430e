import CPrefsLinux

/// One read of a suite, through several domains, as one moment for the watch engine.
///
/// A read must see every write completed before it began. Each domain's freshness token takes the engine's
/// pending events first (one `ioctl`); within one read, the first token taken after the read began already
/// covers every write completed before it, so the other domains' tokens need not ask the kernel again. A
/// suite with administrators' domains thus validates all of them for the cost of one.
enum ReadScope {
    /// Runs `body` as one read.
    @inline(__always)
    static func reading<Result>(_ body: () throws(PrefsError) -> Result) throws(PrefsError) -> Result {
        cprefs_read_scope_begin()
        defer { cprefs_read_scope_end() }
        return try body()
    }

    /// Runs `body`, a check that reads no domain (a kept read's generations), as one read.
    @inline(__always)
    static func checking(_ body: () -> Bool) -> Bool {
        cprefs_read_scope_begin()
        defer { cprefs_read_scope_end() }
        return body()
    }

    /// Whether this read has taken the pending events of the engine `engine` already.
    @inline(__always)
    static func hasTakenEvents(of engine: ObjectIdentifier) -> Bool {
        cprefs_read_scope_has_taken(UInt(bitPattern: engine)) != 0
    }

    /// Records that this read (if it is one) has taken the pending events of `engine`.
    @inline(__always)
    static func tookEvents(of engine: ObjectIdentifier) {
        cprefs_read_scope_note_taken(UInt(bitPattern: engine))
    }
}
