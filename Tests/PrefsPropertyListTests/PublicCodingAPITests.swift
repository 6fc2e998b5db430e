import Foundation
import Testing
@testable import PrefsPropertyList
import TestSupport

/// The public encoding and decoding that `harness defaults export` and `import` are built on.
@Suite("Harness support: public property-list encoding and decoding")
struct HarnessPropertyListCodingTests {
    let sample = PropertyListValue.dictionary([
        "name": .string("Ada <&> \"Lovelace\""), "count": .integer(Int.max), "on": .bool(true), "ratio": .real(0.5),
        "when": .date(Date(timeIntervalSince1970: 1_714_566_600)), "bytes": .data(Data([0, 255])),
        "list": .array([.integer(1), .array([])]), "empty": .dictionary([:]),
    ])

    @Test("Binary and XML data decode back to the same value, and binary is what a domain file holds")
    func roundTrips() throws {
        let binary = try sample.binaryPropertyListData()
        #expect(binary.starts(with: Array("bplist00".utf8)))
        #expect(try PropertyListValue(propertyListData: binary) == sample)
        let xml = try sample.xmlPropertyListData()
        #expect(String(decoding: xml, as: UTF8.self).hasPrefix("<?xml"))
        #expect(try PropertyListValue(propertyListData: xml) == sample)
    }

    @Test("Data that is OpenStep text or no property list at all is refused, with a reason that quotes no value")
    func refusesNonFileFormats() {
        for text in ["{secret = hunter2;}", "hunter2", ""] {
            #expect(throws: PropertyListCodingError.self) { try PropertyListValue(propertyListData: Data(text.utf8)) }
            do {
                _ = try PropertyListValue(propertyListData: Data(text.utf8))
            } catch {
                #expect(!error.reason.contains("hunter2"))
            }
        }
    }

    @Test("Typed text parses OpenStep and XML, and malformed text is an error rather than a string")
    func parsesText() throws {
        #expect(try PropertyListValue(propertyListText: "{appearance = dark; sizes = (s, m);}")
            == .dictionary(["appearance": .string("dark"), "sizes": .array([.string("s"), .string("m")])]))
        #expect(try PropertyListValue(propertyListText: "dark") == .string("dark"))
        #expect(throws: PropertyListCodingError.self) { try PropertyListValue(propertyListText: "{appearance = dark") }
    }

    @Test("A hand-built value nested deeper than the library reads back is refused before encoding")
    func refusesTooDeepValues() {
        var value = PropertyListValue.integer(0)
        for _ in 0...(PropertyListValue.maximumDepth + 1) { value = .array([value]) }
        #expect(throws: PropertyListCodingError.self) { try value.binaryPropertyListData() }
        #expect(throws: PropertyListCodingError.self) { try value.xmlPropertyListData() }
    }
}
