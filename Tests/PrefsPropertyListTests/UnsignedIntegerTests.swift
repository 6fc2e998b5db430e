import Foundation
import Testing
@testable import PrefsPropertyList
import TestSupport

/// CoreFoundation stores an unsigned 64-bit value above `Int64.max` as a 16-byte integer (marker 0x14,
/// the high 8 bytes zero); Python's plistlib writes and reads it the same way.
@Suite("Unsigned integers above Int64.max")
struct UnsignedIntegerTests {
    static let aboveInt64 = UInt64(Int64.max) + 1

    @Test("UInt64.max is written as CoreFoundation writes it, a 16-byte integer with the high 8 bytes zero")
    func binaryBytes() {
        let bytes = BinaryPropertyList.encode(.unsignedInteger(.max))
        let object = Array(bytes[8 ..< 25])
        #expect(object == [0x14] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 8))
    }

    @Test("Python reads what is written, in binary and in XML, as the number written")
    func pythonReads() throws {
        let value = PropertyListValue.dictionary(["max": .unsignedInteger(.max), "above": .unsignedInteger(Self.aboveInt64)])
        let script = """
            import plistlib, sys
            d = plistlib.loads(sys.stdin.buffer.read())
            print(d['max'], d['above'])
            """
        let expected = "18446744073709551615 9223372036854775808\n"
        #expect(String(decoding: try python(script, input: [UInt8](try value.binaryPropertyListData())), as: UTF8.self) == expected)
        let xml = try value.xmlPropertyListData()
        #expect(String(decoding: xml, as: UTF8.self).contains("<integer>18446744073709551615</integer>"))
        #expect(String(decoding: try python(script, input: [UInt8](xml)), as: UTF8.self) == expected)
    }

    @Test("What Python writes, in binary and in XML, reads back as the number", arguments: ["BINARY", "XML"])
    func pythonWrites(format: String) throws {
        let file = try python("""
            import plistlib, sys
            sys.stdout.buffer.write(plistlib.dumps({'max': 2**64 - 1, 'above': 2**63, 'top': 2**63 - 1, 'min': -2**63},
                                                   fmt=plistlib.FMT_\(format)))
            """)
        let value = try PropertyListValue(propertyListData: Data(file))
        #expect(value == .dictionary([
            "max": .unsignedInteger(.max), "above": .unsignedInteger(Self.aboveInt64),
            "top": .integer(.max), "min": .integer(.min),
        ]))
    }

    @Test("Unsigned values above Int64.max convert to the unsigned case, all others to integer")
    func nativeConversion() {
        #expect(PropertyListValue(UInt64.max) == .unsignedInteger(.max))
        #expect(PropertyListValue(UInt.max) == .unsignedInteger(.max))
        #expect(PropertyListValue(NSNumber(value: UInt64.max)) == .unsignedInteger(.max))
        #expect(PropertyListValue([UInt64.max]) == .array([.unsignedInteger(.max)]))
        #expect(PropertyListValue(UInt64(Int64.max)) == .integer(.max))
        #expect(PropertyListValue(NSNumber(value: UInt64(5))) == .integer(5))
        #expect(PropertyListValue(Int128(UInt64.max) + 1) == nil, "wider than 64 bits")
    }

    @Test("The value reads back as UInt64 and as NSNumber, and as no type that cannot hold it")
    func nativeValue() {
        let native = PropertyListValue.unsignedInteger(.max).nativeValue
        #expect(native as? UInt64 == .max)
        #expect(native as? UInt == .max)
        #expect((native as? NSNumber)?.uint64Value == .max)
        #expect(native as? Int == nil)
        #expect(native as? Int64 == nil)
        #expect(PropertyListValue(native) == .unsignedInteger(.max), "converts back to what was stored")
    }

    @Test("A binary round trip keeps the value, and a hand-made small one reads back as an integer")
    func roundTrip() throws {
        for value in [UInt64.max, Self.aboveInt64] {
            #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(.unsignedInteger(value))) == .unsignedInteger(value))
        }
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(.unsignedInteger(5))) == .integer(5))
    }
}
