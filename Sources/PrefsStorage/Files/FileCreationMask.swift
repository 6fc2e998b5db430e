import Glibc

/// The process's file-mode creation mask (umask), read once from `/proc/self/status`: whether it clears any
/// bit of the modes the storage creates with, which must then be set again with `fchmod` (SPEC §2.2: files
/// 0600, directories 0700, whatever the umask). Read, not set: `umask()` only reads by setting, which would race
/// with the program's other threads. A program that changes its umask after its first write is not followed.
enum FileCreationMask {
    /// Whether the mask clears any bit of `mode`. With the usual masks (022, 002, 077) it clears none of 0600
    /// and 0700, and a write makes no further call.
    static func clears(_ mode: mode_t) -> Bool { mask & mode != 0 }

    /// The mask; where `/proc` cannot tell, one that clears everything, so that every mode is set explicitly.
    static let mask: mode_t = {
        guard let file = fopen("/proc/self/status", "r") else { return 0o777 }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0 {
            guard let line else { break }
            let text = String(cString: line)
            guard text.hasPrefix("Umask:") else { continue }
            let digits = text.dropFirst("Umask:".count).filter { $0 >= "0" && $0 <= "7" }
            return mode_t(digits, radix: 8) ?? 0o777
        }
        return 0o777
    }()
}
