import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
import TestSupport

// The fuzz target in Fuzz/DomainFileFuzzer.swift (run with Fuzz/run.sh) feeds arbitrary bytes to
// `FileDomainStorage.parse`. These tests keep its seed corpus and the inputs it found as regressions, and
// check the same invariants the target checks.

/// The committed seed corpus of the fuzz target, found from this file's place in the source tree.
private enum FuzzCorpus {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus").path

    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()

    static func bytes(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: directory + "/" + name).map { [UInt8]($0) }
    }

    /// Seeds that are valid domain files (a dictionary root).
    static let readable: Set<String> = [
        "ours-empty-domain.bplist", "ours-scalars.bplist", "ours-two-collections.bplist", "ours-nested-40.bplist",
        "plistlib-domain.bplist", "plistlib-domain.xml", "plistlib-empty.bplist", "plistlib-empty.xml",
        "plistlib-utf16-keys.bplist", "plistlib-wide-refs.bplist", "xml-bom-leading-space.xml", "xml-no-prolog.xml",
        "limit-depth-512.bplist", "xml-limit-depth-512.xml", "plistlib-equivalent-keys.bplist",
        "plistlib-equivalent-keys.xml", "plistlib-leading-feff.xml", "xml-comments-in-text.xml",
        "plistlib-int128.bplist", "plistlib-equivalent-keys-deep.bplist", "plistlib-equivalent-keys-deep.xml",
    ]

    /// Seeds that must be reported unreadable: everything damaged or hostile whose handling is this library's own
    /// (the binary reader, the depth limit, the dictionary-root rule). Foundation's verdict on malformed XML is
    /// not pinned down here; that it does not crash is.
    static func mustBeUnreadable(_ name: String) -> Bool {
        let prefixes = [
            "cycle-", "huge-", "trailer-", "truncated-", "deep-", "negative-count", "offset-into-table", "ref-past-end",
            "dict-key-not-string", "dict-repeated-key", "ascii-string-high-byte", "int128-out-of-range",
            "unsupported-markers", "shared-exponential", "empty-file", "header-only", "bplist01", "garbage", "nul-bytes",
            "openstep-text", "xml-lone-lt", "xml-deep-", "xml-root-scalar", "plistlib-root-array",
            "ours-root-", "real4-and-date", "limit-depth-513", "xml-limit-depth-513",
        ]
        return prefixes.contains { name.hasPrefix($0) }
    }
}

private let fuzzPath = "/fuzz/domain.plist"

/// What the fuzz target checks for one input: `parse` loads it or reports `domainUnreadable` for the path it
/// was given, agrees with `decodeFile` about the root, and every value that decodes survives a binary round
/// trip bit for bit. Returns the snapshot, or `nil` when the file is unreadable.
@discardableResult
private func loadChecked(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> DomainSnapshot? {
    let decoded = bytes.withUnsafeBytes { buffer in
        Result { () throws(PropertyListCodingError) in try PropertyListText.decodeFile(buffer) }
    }
    do {
        let snapshot = try FileDomainStorage.parse(bytes, path: fuzzPath)
        // Compared as encodings: `==` on a value holding NaN is false.
        let root = try? decoded.get()
        #expect(root.map(BinaryPropertyList.encode) == BinaryPropertyList.encode(.dictionary(snapshot.contents)),
                sourceLocation: sourceLocation)
        expectRoundTrip(.dictionary(snapshot.contents), sourceLocation: sourceLocation)
        return snapshot
    } catch {
        guard case .domainUnreadable(let path, let reason) = error else {
            Issue.record("parse threw \(error), not domainUnreadable", sourceLocation: sourceLocation)
            return nil
        }
        #expect(path == fuzzPath, sourceLocation: sourceLocation)
        if case .success(let root) = decoded {
            #expect(reason == "the root is not a dictionary", sourceLocation: sourceLocation)
            if case .dictionary = root { Issue.record("a dictionary root was rejected", sourceLocation: sourceLocation) }
            expectRoundTrip(root, sourceLocation: sourceLocation)
        }
        return nil
    }
}

private func expectRoundTrip(_ value: PropertyListValue, sourceLocation: SourceLocation) {
    #expect(BinaryPropertyList.isWithinDepthLimit(value), sourceLocation: sourceLocation)
    let encoded = BinaryPropertyList.encode(value)
    guard let decoded = try? BinaryPropertyList.decode(encoded) else {
        Issue.record("the encoding of a decoded value does not decode", sourceLocation: sourceLocation)
        return
    }
    #expect(BinaryPropertyList.encode(decoded) == encoded, "re-encoding is not byte-stable", sourceLocation: sourceLocation)
}

@Suite("Fuzz corpus and regressions")
struct FuzzRegressionTests {
    @Test("The fuzz seed corpus is present")
    func corpusPresent() {
        #expect(FuzzCorpus.names.count >= 50, "no seed corpus at \(FuzzCorpus.directory)")
    }

    @Test("Every fuzz seed loads or is reported unreadable, without crashing", arguments: FuzzCorpus.names)
    func seed(name: String) throws {
        let bytes = try #require(FuzzCorpus.bytes(name))
        let snapshot = loadChecked(bytes)
        if FuzzCorpus.readable.contains(name) {
            #expect(snapshot != nil, "\(name) should load")
        } else if FuzzCorpus.mustBeUnreadable(name) {
            #expect(snapshot == nil, "\(name) should be unreadable")
        }
    }
}
