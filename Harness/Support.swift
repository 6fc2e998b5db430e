// Helpers shared by the subcommands: errors, output, the working directory, files and pipes.

import Foundation
import Glibc
import RVS_PersistentPrefs

/// What every subcommand is told besides its own arguments.
struct HarnessContext {
    /// The directory given with `--directory`, made absolute; `nil` when none was given.
    let directory: String?
}

/// A failure to report: one line on standard error, then exit with `status`.
struct HarnessError: Error, CustomStringConvertible {
    let message: String
    let status: Int32

    /// Bad usage: an unknown verb or option, a missing or extra argument (exit status 2).
    static func usage(_ message: String) -> HarnessError { HarnessError(message: message, status: 2) }

    /// Bad input or a failed operation (exit status 1).
    static func failure(_ message: String) -> HarnessError { HarnessError(message: message, status: 1) }

    /// Exit with `status`, the failure having been reported already: for a subcommand that prints its
    /// own errors and returns an exit status.
    static func alreadyReported(status: Int32) -> HarnessError { HarnessError(message: "", status: status) }

    var description: String { message }
}

/// Output without C stdio buffering: every line reaches the terminal or pipe at once, in order, even when
/// standard output is a pipe to the other process of the `share` demo or to a test.
enum Console {
    /// Writes `text` and a newline to standard output.
    static func say(_ text: String = "") {
        write(text + "\n", to: 1)
    }

    /// Writes `text` to standard output as it is.
    static func write(_ text: String) {
        write(text, to: 1)
    }

    /// Writes raw bytes to standard output.
    static func write(_ data: Data) {
        data.withUnsafeBytes { writeAll($0, to: 1) }
    }

    /// Writes `text` and a newline to standard error.
    static func complain(_ text: String) {
        write(text + "\n", to: 2)
    }

    /// Whether standard input is a terminal (then a prompt helps; for piped input it would be noise).
    static var inputIsTerminal: Bool { isatty(0) == 1 }

    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
    }

    private static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return  // a closed pipe or full disk: nothing useful left to tell anyone
            }
            offset += written
        }
    }
}

/// `path` made absolute against the current directory, as a shell user means a relative path.
func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}

/// The description of the C `errno` value `code`, such as "No such file or directory".
func systemMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// The whole contents of the file at `path`, or of standard input for `-`.
/// - Throws: A failure naming the file and the system's reason when it cannot be read.
func readWholeFile(_ path: String) throws(HarnessError) -> Data {
    if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw .failure("cannot read \(path): \(systemMessage(errno))") }
    defer { close(descriptor) }
    var contents = Data()
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw .failure("cannot read \(path): \(systemMessage(errno))")
        }
        if count == 0 { return contents }
        contents.append(contentsOf: chunk[..<count])
    }
}

/// Runs `body` with standard error sent to /dev/null.
///
/// Foundation's text property-list parser prints its own diagnostics on standard error for some malformed
/// input; the harness reports the failure itself, in one line, so those must not leak around it.
func withStandardErrorSilenced<Result>(_ body: () throws -> Result) rethrows -> Result {
    let saved = dup(2)
    let null = open("/dev/null", O_WRONLY)
    if saved >= 0 && null >= 0 { dup2(null, 2) }
    if null >= 0 { close(null) }
    defer {
        if saved >= 0 {
            dup2(saved, 2)
            close(saved)
        }
    }
    return try body()
}

/// Property-list text typed by a person, parsed strictly (malformed text is an error, never a string).
func parsePropertyListText(_ text: String) throws(PropertyListCodingError) -> PropertyListValue {
    try withStandardErrorSilenced { Result { () throws(PropertyListCodingError) in try PropertyListValue(propertyListText: text) } }.get()
}

/// The directory a demo writes into, with the library pointed at it.
///
/// It is the `--directory` the user gave, or else a fresh private temporary directory (mode 0700, made with
/// `mkdtemp`) that ``finish()`` removes: without `--directory` a demo leaves nothing behind and never
/// touches the user's real preferences under `~/.config`.
final class Workspace {
    /// The preferences directory: the application and global domains live here.
    let path: String
    /// Whether the directory was made for this run, and is removed by ``finish()``.
    let isTemporary: Bool

    /// The application domain's name in every demo, so that its file has a recognizable name.
    static let applicationDomainName = "com.example.harness"

    /// The group container of the `share` demo, a subdirectory of the workspace.
    var groupContainer: String { path + "/GroupContainer" }

    private init(path: String, isTemporary: Bool) {
        self.path = path
        self.isTemporary = isTemporary
    }

    /// The `--directory` in `context`, or a fresh temporary directory.
    static func make(_ context: HarnessContext) throws(HarnessError) -> Workspace {
        if let directory = context.directory { return Workspace(path: directory, isTemporary: false) }
        return Workspace(path: try makeTemporaryDirectory(), isTemporary: true)
    }

    /// A workspace in a directory chosen by the caller, which is never removed.
    static func existing(_ path: String) -> Workspace {
        Workspace(path: path, isTemporary: false)
    }

    private static func makeTemporaryDirectory() throws(HarnessError) -> String {
        var template = Array((NSTemporaryDirectory() + "/rvs-harness-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .failure("cannot make a temporary directory: \(systemMessage(errno))")
        }
        return String(cString: made).replacingOccurrences(of: "//", with: "/")
    }

    /// Points the library at this directory: `RVS_PREFS_DIRECTORY` (read by the library on every
    /// operation) for the application and global domains, and the static configuration for the rest.
    func pointLibraryHere() {
        setenv(DefaultsLocations.directoryVariable, path, 1)
        RVS_PersistentPrefs.applicationDomainName = Self.applicationDomainName
        RVS_PersistentPrefs.groupContainerDirectory = groupContainer
        RVS_PersistentPrefs.groupID = nil
    }

    /// The application domain's file.
    var applicationDomainFile: String { path + "/" + Self.applicationDomainName + DomainName.fileExtension }

    /// Removes the directory if it was made for this run.
    func finish() {
        if isTemporary { try? FileManager.default.removeItem(atPath: path) }
    }
}

/// Reads lines from a file descriptor (the other process's standard output in the `share` demo).
final class LineReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line without its newline, or `nil` at the end of the input.
    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}

/// Wraps prose to `width` columns after `indent`, so that the demos' explanations read well in a terminal.
func paragraph(_ text: String, indent: String = "", width: Int = 100) -> String {
    var lines: [String] = []
    var line = indent
    for word in text.split(separator: " ", omittingEmptySubsequences: true) {
        if line.count > indent.count && line.count + 1 + word.count > width {
            lines.append(line)
            line = indent
        }
        line += (line.count > indent.count ? " " : "") + word
    }
    if line.count > indent.count { lines.append(line) }
    return lines.joined(separator: "\n")
}

/// Prints `text` as a wrapped paragraph.
func explain(_ text: String, indent: String = "") {
    Console.say(paragraph(text, indent: indent))
}
