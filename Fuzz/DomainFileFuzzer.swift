// libFuzzer target for the path from the bytes of a domain file to a value: `PropertyListText.decodeFile` →
// `BinaryPropertyList.decode` (binary) or `XMLInputRepair` + Foundation's `PropertyListSerialization` (XML).
//
// Not part of Package.swift: `Fuzz/run.sh` compiles this file together with the codec's sources alone
// (Sources/PrefsPropertyList) into one module, so package and internal API is reachable without `@testable`,
// with `-sanitize=fuzzer,address`.
//
// Invariants checked on every input, beyond "nothing traps and AddressSanitizer stays quiet":
// 1. `decodeFile` either returns a value or throws `PropertyListCodingError` (its typed throws), and agrees
//    with the public `PropertyListValue(propertyListData:)`.
// 2. A decoded value never nests deeper than the limit the encoders rely on.
// 3. Every value that decodes re-encodes with `BinaryPropertyList.encode`, decodes back to an identical value
//    (reals and dates compared bit for bit, so NaN and -0.0 count, strings byte for byte), and re-encodes to
//    identical bytes.
// 4. Every value that decodes exports to XML that imports again, and that export is a fixed point: exporting
//    the imported value gives the same XML (so XML loses only what it documents: sub-second dates, NaN
//    payloads and the width of a 4-byte real, all of which the first export already dropped).
// 5. `decodeFileKeepingShadowed` gives the value `decodeFile` gives, and the entries it sets aside (keys equal
//    under `String ==` to another of their dictionary) all still apply to that unchanged value; encoded with
//    them, the value decodes back to itself with the same entries aside, and re-encodes to identical bytes.
import Foundation

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
    let decoded = bytes.withUnsafeBytes { buffer in
        Result { () throws(PropertyListCodingError) in try PropertyListText.decodeFile(buffer) }
    }
    let viaPublicAPI = Result { () throws(PropertyListCodingError) in try PropertyListValue(propertyListData: Data(bytes)) }
    switch (decoded, viaPublicAPI) {
    case (.success(let value), .success(let other)):
        guard identical(value, other) else { fatalError("decodeFile and init(propertyListData:) disagree") }
        checkRoundTrip(value)
        checkXMLRoundTrip(value)
        checkShadowedRoundTrip(bytes, value)
    case (.failure, .failure):
        return
    default:
        fatalError("decodeFile and init(propertyListData:) disagree about whether the input is readable")
    }
}

/// Invariant 5: what a write of the unchanged domain keeps of the entries set aside is all of them, and they
/// come back as they were.
private func checkShadowedRoundTrip(_ bytes: [UInt8], _ value: PropertyListValue) {
    let kept: (value: PropertyListValue, shadowed: ShadowedEntries?)
    do {
        kept = try bytes.withUnsafeBytes { buffer in
            Result { () throws(PropertyListCodingError) in try PropertyListText.decodeFileKeepingShadowed(buffer) }
        }.get()
    } catch {
        fatalError("decodeFileKeepingShadowed refuses what decodeFile reads: \(error)")
    }
    guard identical(kept.value, value) else { fatalError("decodeFileKeepingShadowed and decodeFile disagree") }
    let retained = kept.shadowed?.retained(in: kept.value)
    guard retained == kept.shadowed else { fatalError("an unchanged value does not keep every entry set aside") }
    let encoded = BinaryPropertyList.encode(kept.value, shadowed: retained)
    let again: (value: PropertyListValue, shadowed: ShadowedEntries?)
    do {
        again = try encoded.withUnsafeBytes { buffer in
            Result { () throws(PropertyListCodingError) in try BinaryPropertyList.decodeKeepingShadowed(buffer) }
        }.get()
    } catch {
        fatalError("our own encoding with the entries set aside does not decode: \(error)")
    }
    guard identical(again.value, kept.value), again.shadowed == kept.shadowed else {
        fatalError("the entries set aside did not come back as they were")
    }
    guard BinaryPropertyList.encode(again.value, shadowed: again.shadowed) == encoded else {
        fatalError("re-encoding with the entries set aside is not byte-stable")
    }
}

/// Invariant 4: the XML export of a value the library accepted imports again, and exports the same way.
private func checkXMLRoundTrip(_ value: PropertyListValue) {
    let xml = PropertyListText.encodeXML(value)
    let imported: PropertyListValue
    do {
        imported = try PropertyListValue(propertyListData: xml)
    } catch {
        fatalError("the XML export of an accepted value does not import: \(error)")
    }
    guard PropertyListText.encodeXML(imported) == xml else { fatalError("XML export → import → export changed the XML") }
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
    case (.float(let a), .float(let b)):
        return a.bitPattern == b.bitPattern
    case (.date(let a), .date(let b)):
        return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
    case (.array(let a), .array(let b)):
        return a.count == b.count && zip(a, b).allSatisfy { identical($0, $1) }
    case (.dictionary(let a), .dictionary(let b)):
        guard a.count == b.count else { return false }
        for (key, element) in a {
            // The key's spelling too: `b[key]` would find a canonically equivalent one.
            guard let index = b.index(forKey: key), b.keys[index].utf8.elementsEqual(key.utf8),
                  identical(element, b.values[index]) else { return false }
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
        "float": .float(12.3), "floatnan": .float(.nan),
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
