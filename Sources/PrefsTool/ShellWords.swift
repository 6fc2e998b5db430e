// Paths and arguments as a shell user types them.

import Foundation
import PrefsStorage

/// `argument` as a shell would need it typed: the demos show the commands they run.
package func shellQuoted(_ argument: String) -> String {
    let safe = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=@+,".contains($0) }
    return safe && !argument.isEmpty ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// `path` with every symbolic link followed (`realpath`); `nil` when it cannot be resolved (it does not exist).
package func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// `path` made absolute against the current directory, as a shell user means a relative path, with single slashes.
package func absolutePath(_ path: String) -> String {
    PathBytes.trimmed(path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path)
}
