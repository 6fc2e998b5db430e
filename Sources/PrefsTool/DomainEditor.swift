// `harness defaults edit DOMAIN [KEY]`: a domain, or one value, edited in the user's editor, the way
// `crontab -e`, `visudo` and `systemctl edit` work.
//
// The text goes to a private temporary file; the editor runs on it; when it exits 0, the text is parsed
// and written in one locked read-modify-write, refused if the domain changed meanwhile (unless --force).
// Anything that goes wrong before that write changes nothing, and keeps the edited text in its file.

import Foundation
import Glibc
import RVS_PersistentPrefs

package struct DomainEditor {
    package let inspector: DomainInspector
    /// `.xml` or `.openStep`.
    package let format: TransferFormat
    package let force: Bool

    package func edit(_ domain: String, key: String?) throws(HarnessError) {
        let domains = inspector.domains
        let storage = try domains.storage(domain)
        // With no preferences directory there is nothing of the user's to edit: said before the editor opens.
        if let unavailable = storage as? NoDirectoryDomainStorage { throw .failure(unavailable.reason) }
        let what = key.map { "(\(domain), \($0))" } ?? domain
        let before = try domains.contents(of: storage)
        let original: PropertyListValue = key.map { before[$0] ?? .dictionary([:]) } ?? .dictionary(before)
        let text = try DomainInspector.encoded(original, as: format, describing: what)

        let file = try TemporaryFile(suffix: format == .xml ? ".plist" : ".txt", contents: text)
        // The user's edit is never thrown away: when it cannot be written, the file stays, and the error says where.
        var keepsEdit = false
        defer { if !keepsEdit { file.remove() } }
        try runEditor(on: file.path)
        guard let saved = try PosixIO.readWholeFile(file.path, atMost: FileDomainStorage.maximumFileSize) else {
            throw .failure("the edited text is larger than \(FileDomainStorage.maximumFileSize) bytes; nothing was changed")
        }
        if saved == text { return }  // Nothing was edited: nothing is written, and no conflict can arise.
        do throws(HarnessError) {
            try write(saved, to: storage, describing: what, key: key, original: original, before: before,
                      schema: InstalledSchema.find(for: domain))
        } catch {
            keepsEdit = true
            // The editor may have replaced the file with one of its own mode: the kept text stays private.
            chmod(file.path, 0o600)
            throw HarnessError(message: error.message + "; your edited text is kept in \(file.path)", status: error.status)
        }
    }

    /// Writes the edited text `saved` over what the edit started from, refusing when it changed meanwhile.
    private func write(_ saved: Data, to storage: any DomainStorage, describing what: String, key: String?,
                       original: PropertyListValue, before: [String: PropertyListValue], schema: InstalledSchema?) throws(HarnessError) {
        let domains = inspector.domains
        var edited = try parse(saved)
        if format == .openStep { edited = Self.retyped(edited, like: original) }
        edited = Self.keepingExactDates(edited, like: original)
        if key == nil, case .dictionary = edited {} else if key == nil {
            throw .failure("the edited domain must be a dictionary, not \(PropertyListPrinter.typeName(edited, article: true)); nothing was changed")
        }

        try domains.modify(storage, repairing: .failIfUnreadable) { contents throws(HarnessError) in
            let current: PropertyListValue? = key.map { contents[$0] } ?? .dictionary(contents)
            let unchanged = key.map { before[$0] } ?? .dictionary(before)
            let same = switch (current, unchanged) {
            case (nil, nil): true
            case (let now?, let then?): now.isIdentical(to: then)
            default: false
            }
            guard same || force else {
                throw .failure("\(what) was changed by someone else while the editor was open; nothing was written; run the edit again, or add --force to write your version over theirs")
            }
            let old = contents
            if let key {
                contents[key] = edited
            } else if case .dictionary(let entries) = edited {
                contents = entries
            }
            // The app's installed schema refuses what the app would, as for write.
            try schema?.refuseChange(from: old, to: contents)
        }
    }

    /// Runs `$VISUAL`, else `$EDITOR`, else `vi`, on `path`, through the shell as other tools do, so
    /// that an editor given with options (`code --wait`) works.
    private func runEditor(on path: String) throws(HarnessError) {
        let environment = ProcessInfo.processInfo.environment
        let editor = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", editor + " \"$1\"", "sh", path]
        do {
            try process.run()
        } catch {
            throw .failure("cannot start the editor (\(editor)): \(error.localizedDescription)")
        }
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let how = process.terminationReason == .exit ? "exited with status \(process.terminationStatus)" : "was killed by signal \(process.terminationStatus)"
            throw .failure("the editor (\(editor)) \(how); nothing was changed")
        }
    }

    /// The edited text as a value, or why not, with the line the parser stopped at.
    private func parse(_ bytes: Data) throws(HarnessError) -> PropertyListValue {
        do {
            if format == .xml { return try PropertyListValue(propertyListData: bytes) }
            return try ValueParser.propertyListText(String(decoding: bytes, as: UTF8.self))
        } catch {
            throw .failure("the edited text is not \(format == .xml ? "an XML" : "an OpenStep") property list (\(Self.diagnosis(bytes, openStep: format == .openStep) ?? error.description)); nothing was changed")
        }
    }

    /// Foundation's own account of where text fails to parse ("Encountered unknown tag strin on line 5").
    ///
    /// The library's codec says only "not a property list", because it may be reading someone's stored
    /// values into a log; here the text is the user's own edit, shown back to the user, and the line is
    /// what they need.
    package static func diagnosis(_ bytes: Data, openStep: Bool) -> String? {
        var format = PropertyListSerialization.PropertyListFormat.xml
        let error: NSError
        do {
            _ = try Console.withErrorsSilenced { try PropertyListSerialization.propertyList(from: bytes, options: [], format: &format) }
            return nil
        } catch let failure as NSError {
            error = failure
        }
        let oldStyle = error.userInfo["kCFPropertyListOldStyleParsingError"] as? NSError
        let chosen = openStep ? (oldStyle ?? error) : error
        return chosen.userInfo[NSDebugDescriptionErrorKey] as? String
    }

    /// Both text formats write a date to the whole second (XML property lists have no fractions): a date whose
    /// text was left as it was shown keeps the exact value it had, so that an edit of one entry does not cut
    /// the fractions off every other date. Dictionaries are matched by key, arrays by position.
    package static func keepingExactDates(_ value: PropertyListValue, like old: PropertyListValue?) -> PropertyListValue {
        switch (value, old) {
        case (.dictionary(let entries), .dictionary(let oldEntries)?):
            return .dictionary(entries.reduce(into: [:]) { result, entry in result[entry.key] = keepingExactDates(entry.value, like: oldEntries[entry.key]) })
        case (.array(let elements), .array(let oldElements)?):
            return .array(elements.enumerated().map { index, element in keepingExactDates(element, like: index < oldElements.count ? oldElements[index] : nil) })
        case (.date(let shown), .date(let exact)?):
            let seconds = exact.timeIntervalSinceReferenceDate
            return [seconds.rounded(.down), seconds.rounded()].contains(shown.timeIntervalSinceReferenceDate) ? .date(exact) : value
        default:
            return value
        }
    }

    /// OpenStep text has only strings: a string whose text still reads as the type the value had before
    /// the edit (`5` where an integer was, `1` where a Boolean was) gets that type back; new entries stay
    /// strings. Dictionaries are matched by key, arrays by position.
    package static func retyped(_ value: PropertyListValue, like old: PropertyListValue?) -> PropertyListValue {
        switch (value, old) {
        case (.dictionary(let entries), .dictionary(let oldEntries)?):
            return .dictionary(entries.reduce(into: [:]) { result, entry in result[entry.key] = retyped(entry.value, like: oldEntries[entry.key]) })
        case (.array(let elements), .array(let oldElements)?):
            return .array(elements.enumerated().map { index, element in retyped(element, like: index < oldElements.count ? oldElements[index] : nil) })
        case (.string(let text), let old?):
            switch old {
            case .integer: return Int(text).map { .integer($0) } ?? value
            // An unsigned integer above Int64.max stays one; one edited down into Int64's range is an integer.
            case .unsignedInteger: return Int(text).map { .integer($0) } ?? UInt64(text).map { .unsignedInteger($0) } ?? value
            case .real, .float: return Double(text).flatMap { $0.isFinite ? .real($0) : nil } ?? value
            case .bool: return (try? ValueParser.scalar("-bool", text)) ?? value
            case .date: return ValueParser.date(text).map { .date($0) } ?? value
            default: return value
            }
        default:
            return value
        }
    }
}

/// A private temporary file (mode 0600, made with `mkstemps` in `$TMPDIR`), for one edit.
package struct TemporaryFile {
    package let path: String

    package init(suffix: String, contents: Data) throws(HarnessError) {
        var template = Array((NSTemporaryDirectory() + "/harness-defaults-edit-XXXXXX" + suffix).replacingOccurrences(of: "//", with: "/").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, Int32(suffix.utf8.count)) }
        guard descriptor >= 0 else { throw .failure("cannot make a temporary file to edit: \(SystemError.current)") }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { close(descriptor) }
        do {
            // mkstemps makes the file 0600 whatever the umask; the editor may replace it, which is fine.
            try PosixIO.writeAll(contents, to: descriptor)
        } catch {
            unlink(path)
            throw .failure("cannot write the temporary file \(path): \(error)")
        }
    }

    package func remove() { unlink(path) }
}
