/// Paths taken apart by their bytes, never by `Character`.
///
/// In a Linux path, the byte `/` always separates components. In a Swift `String`, a `/` followed by
/// a combining mark (U+0301, say, at the start of a name) is one `Character` with it, so splitting,
/// prefix tests and counts by `Character` would miss that slash, and a watch or a directory made for
/// such a path would land on another one.
package enum PathBytes {
    private static let slash = UInt8(ascii: "/")

    /// Whether `path` is absolute: its first byte is `/`.
    package static func isAbsolute(_ path: String) -> Bool { path.utf8.first == slash }

    /// The components of `path`, without the empty ones that doubled or trailing slashes make.
    static func components(_ path: String) -> [String] {
        path.utf8.split(separator: slash).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The directory holding `path`: `/` for `/` itself and for an entry of `/`.
    static func parent(_ path: String) -> String {
        guard let last = path.utf8.lastIndex(of: slash), last != path.utf8.startIndex else { return "/" }
        return String(decoding: path.utf8[..<last], as: UTF8.self)
    }

    /// Whether `path` lies below the directory `ancestor` (not `ancestor` itself).
    static func isBelow(_ path: String, _ ancestor: String) -> Bool {
        let prefix = ancestor == "/" ? "/" : ancestor + "/"
        return path.utf8.count > prefix.utf8.count && path.utf8.starts(with: prefix.utf8)
    }

    /// The component of `path` just below its ancestor directory `ancestor`; empty if `path` is not below it.
    static func component(of path: String, below ancestor: String) -> String {
        guard isBelow(path, ancestor) else { return "" }
        let rest = components(path).dropFirst(components(ancestor).count)
        return rest.first ?? ""
    }

    /// `path` with every run of slashes made one and no trailing slash (`/` stays `/`), so that neither it nor a
    /// path joined to it contains `//` (SPEC §7.5): `/tmp//u/` is `/tmp/u`. Linux reads both the same way.
    package static func trimmed(_ path: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count)
        for byte in path.utf8 where !(byte == slash && bytes.last == slash) { bytes.append(byte) }
        while bytes.count > 1, bytes.last == slash { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `directory` and `name` joined by exactly one slash.
    package static func joined(_ directory: String, _ name: String) -> String {
        let base = trimmed(directory)
        return (base == "/" ? "" : base) + "/" + name
    }
}
