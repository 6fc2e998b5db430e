// libFuzzer target for the path from the bytes of a domain file to a loaded domain:
// `FileDomainStorage.parse` → `PropertyListText.decodeFile` → `BinaryPropertyList.decode` (binary) or
// Foundation's `PropertyListSerialization` (XML) → `DomainSnapshot` or `PrefsError.domainUnreadable`.
//
// Not part of Package.swift: `Fuzz/run.sh` compiles this file together with the library's sources into one
// module (so internal API is reachable without `@testable`) with `-sanitize=fuzzer,address`.
//
// Invariants checked on every input, beyond "nothing traps and AddressSanitizer stays quiet":
// 1. `parse` either returns a snapshot or throws `domainUnreadable` naming the path it was given.
// 2. `parse` succeeds exactly when `decodeFile` gives a dictionary root, with the same contents.
// 3. Every value that decodes re-encodes with `BinaryPropertyList.encode`, decodes back to an identical value
//    (reals and dates compared bit for bit, so NaN and -0.0 count), and re-encodes to identical bytes.
// 4. A decoded value never nests deeper than the limit the encoder relies on.
import Foundation

private let fuzzPath = "/fuzz/domain.plist"

@_cdecl("LLVMFuzzerTestOneInput")
public func domainFileFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : [UInt8](UnsafeBufferPointer(start: data, count: size))
    checkDomainFile(bytes)
    return 0
}

/// Writes the seeds made by this library's own encoder into the directory named by
/// `FUZZ_WRITE_SEEDS`, then exits; otherwise does nothing and fuzzing starts.
@_cdecl("LLVMFuzzerInitialize")
public func domainFileFuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    guard let directory = ProcessInfo.processInfo.environment["FUZZ_WRITE_SEEDS"], !directory.isEmpty else { return 0 }
    for (name, value) in ourSeeds() {
        let bytes = BinaryPropertyList.encode(value)
        let path = directory + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            fatalError("cannot write \(path)")
        }
    }
    exit(0)
}

private func checkDomainFile(_ bytes: [UInt8]) {
    let snapshot: DomainSnapshot?
    var readReason: String?
    do {
        snapshot = try FileDomainStorage.parse(bytes, path: fuzzPath)
    } catch {
        guard case .domainUnreadable(let path, let reason) = error else {
            fatalError("parse threw something other than domainUnreadable: \(error)")
        }
        guard path == fuzzPath else { fatalError("domainUnreadable names \(path), not the file's path") }
        snapshot = nil
        readReason = reason
    }

    if let snapshot {
        checkRoundTrip(.dictionary(snapshot.contents))
        return
    }
    // Only a file whose root is not a dictionary decodes at all; decode it again to check that value too.
    guard readReason == "the root is not a dictionary" else { return }
    let root: PropertyListValue
    do {
        root = try bytes.withUnsafeBytes { buffer in
            Result { () throws(PropertyListFormatError) in try PropertyListText.decodeFile(buffer) }
        }.get()
    } catch {
        fatalError("parse said the root is not a dictionary, but decodeFile fails: \(error)")
    }
    if case .dictionary = root { fatalError("parse rejected a dictionary root") }
    checkRoundTrip(root)
}

private func checkRoundTrip(_ value: PropertyListValue) {
    guard BinaryPropertyList.isWithinDepthLimit(value) else {
        fatalError("a decoded value nests deeper than the encoder's limit")
    }
    let encoded = BinaryPropertyList.encode(value)
    let decoded: PropertyListValue
    do {
        decoded = try BinaryPropertyList.decode(encoded)
    } catch {
        fatalError("our own encoding of a decoded value does not decode: \(error)")
    }
    guard identical(value, decoded) else { fatalError("round trip changed the value") }
    guard BinaryPropertyList.encode(decoded) == encoded else { fatalError("re-encoding is not byte-stable") }
}

/// Equality that also tells NaN payloads and the sign of zero apart: what a round trip must preserve.
private func identical(_ lhs: PropertyListValue, _ rhs: PropertyListValue) -> Bool {
    switch (lhs, rhs) {
    case (.real(let a), .real(let b)):
        return a.bitPattern == b.bitPattern
    case (.date(let a), .date(let b)):
        return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
    case (.array(let a), .array(let b)):
        return a.count == b.count && zip(a, b).allSatisfy { identical($0, $1) }
    case (.dictionary(let a), .dictionary(let b)):
        guard a.count == b.count else { return false }
        for (key, element) in a {
            guard let other = b[key], identical(element, other) else { return false }
        }
        return true
    case (.string(let a), .string(let b)):
        // Byte-exact: `==` on String ignores normalization, a round trip must not change it.
        return a.utf8.elementsEqual(b.utf8)
    default:
        return lhs == rhs
    }
}

/// Domains written by this library's encoder, for the seed corpus.
private func ourSeeds() -> [(String, PropertyListValue)] {
    let scalars: [String: PropertyListValue] = [
        "bool": .bool(true), "false": .bool(false), "zero": .integer(0), "small": .integer(200),
        "int16": .integer(40_000), "int32": .integer(3_000_000_000), "negative": .integer(-1),
        "min": .integer(Int.min), "max": .integer(Int.max),
        "real": .real(3.25), "nan": .real(.nan), "negzero": .real(-0.0), "inf": .real(-.infinity),
        "date": .date(Date(timeIntervalSinceReferenceDate: 700_000_000.5)),
        "data": .data(Data([0, 1, 2, 0xFF])), "ascii": .string("dark"), "unicode": .string("ünïcødé 😀"),
        "empty": .string(""),
    ]
    var nested: PropertyListValue = .string("bottom")
    for level in 0 ..< 40 { nested = level.isMultiple(of: 2) ? .array([nested]) : .dictionary(["k": nested]) }
    let longArray = PropertyListValue.array((0 ..< 20).map { .integer($0 * 1000) })
    let manyKeys = PropertyListValue.dictionary(Dictionary(uniqueKeysWithValues: (0 ..< 20).map { ("key\($0)", .bool($0 % 2 == 0)) }))
    return [
        ("ours-empty-domain.bplist", .dictionary([:])),
        ("ours-scalars.bplist", .dictionary(["com.example.prefs": .dictionary(scalars)])),
        ("ours-two-collections.bplist", .dictionary([
            "a.prefs": .dictionary(["appearance": .string("dark"), "count": .integer(3)]),
            "b.prefs": .dictionary(["list": longArray, "flags": manyKeys]),
        ])),
        ("ours-nested-40.bplist", .dictionary(["deep": nested])),
        ("ours-root-array.bplist", .array([.string("not"), .string("a"), .string("domain")])),
        ("ours-root-string.bplist", .string("just a string")),
    ]
}
