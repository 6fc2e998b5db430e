import Foundation
import Testing
@testable import PrefsPropertyList
import TestSupport

/// Every domain the library accepts exports to XML and imports again: the XML reader accepts exactly the
/// nesting the binary reader does.
@Suite("Binary and XML accept the same nesting")
struct DepthAgreementTests {
    /// A domain (root dictionary, then a collection) whose deepest value lies `depth` levels below the root.
    private func domain(leafDepth depth: Int) -> PropertyListValue {
        var value = PropertyListValue.bool(true)
        for _ in 0 ..< depth - 2 { value = .array([value]) }
        return .dictionary(["collection": .dictionary(["deep": value])])
    }

    @Test("A domain at the depth limit, and just inside it, exports to XML that imports to the same value",
          arguments: [PropertyListValue.maximumDepth - 3, PropertyListValue.maximumDepth - 2,
                       PropertyListValue.maximumDepth - 1, PropertyListValue.maximumDepth])
    func atTheLimit(depth: Int) throws {
        let value = domain(leafDepth: depth)
        let binary = try value.binaryPropertyListData()
        let stored = try PropertyListValue(propertyListData: binary)
        let xml = try stored.xmlPropertyListData()
        #expect(try PropertyListValue(propertyListData: xml) == value)
    }

    @Test("The deepest value a caller can store converts, and its domain exports and imports")
    func deepestConvertedValue() throws {
        var native: Any = true
        for _ in 0 ..< PropertyListValue.maximumValueDepth { native = [native] }
        let value = try #require(PropertyListValue(native))
        let domain = PropertyListValue.dictionary(["collection": .dictionary(["deep": value])])
        #expect(try PropertyListValue(propertyListData: try domain.xmlPropertyListData()) == domain)
    }

    @Test("One level past the limit is refused by both readers")
    func pastTheLimit() {
        var value = PropertyListValue.bool(true)
        for _ in 0 ..< PropertyListValue.maximumDepth + 1 { value = .array([value]) }
        // The encoders refuse it too, so the files are assembled around a value at the limit.
        let xmlAtLimit = String(decoding: PropertyListText.encodeXML(domain(leafDepth: PropertyListValue.maximumDepth)), as: UTF8.self)
        let xmlPast = xmlAtLimit.replacingOccurrences(of: "<true/>", with: "<array><true/></array>")
        #expect(throws: PropertyListCodingError.self) { try PropertyListValue(propertyListData: Data(xmlPast.utf8)) }
        let binaryPast = BinaryPropertyList.encode(.dictionary(["collection": .dictionary(["deep": .array([
            domain(leafDepth: PropertyListValue.maximumDepth).dictionaryValue!["collection"]!.dictionaryValue!["deep"]!,
        ])])]))
        #expect(throws: PropertyListCodingError.self) { try PropertyListValue(propertyListData: Data(binaryPast)) }
        #expect(throws: PropertyListCodingError.self) { try value.xmlPropertyListData() }
    }
}
