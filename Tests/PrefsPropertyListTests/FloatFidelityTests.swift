import Foundation
import Testing
@testable import PrefsPropertyList
import TestSupport

/// A `Float` is kept as CoreFoundation keeps it: a 4-byte real in a binary property list, so that tools
/// show the digits written (`12.3`) and a reader gets back the same `Float`.
@Suite("Single-precision numbers keep their width")
struct FloatFidelityTests {
    @Test("A Swift Float and an NSNumber made from one become .float; a Double stays .real")
    func conversion() {
        #expect(PropertyListValue(Float(12.3)) == .float(12.3))
        #expect(PropertyListValue(NSNumber(value: Float(12.3))) == .float(12.3))
        #expect(PropertyListValue(12.3) == .real(12.3))
        #expect(PropertyListValue(NSNumber(value: 12.3)) == .real(12.3))
        #expect(PropertyListValue([Float(1.5), Float(2.5)]) == .array([.float(1.5), .float(2.5)]))
    }

    @Test("A Float is written as a 4-byte real (marker 0x22) and decodes to the same Float",
          arguments: [Float(12.3), 0.8, -0.0, .infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude])
    func binaryRoundTrip(float: Float) throws {
        let bytes = BinaryPropertyList.encode(.float(float))
        #expect(bytes[8] == 0x22 && Array(bytes[9 ..< 13]) == bigEndian(float.bitPattern))
        guard case .float(let back) = try BinaryPropertyList.decode(bytes) else {
            Issue.record("a 4-byte real did not decode as .float")
            return
        }
        #expect(back.bitPattern == float.bitPattern)
    }

    @Test("A NaN Float keeps its bit pattern through the binary format")
    func nanPayload() throws {
        let nan = Float(bitPattern: 0x7FC0_1234)
        guard case .float(let back) = try BinaryPropertyList.decode(BinaryPropertyList.encode(.float(nan))) else {
            Issue.record("a 4-byte NaN did not decode as .float")
            return
        }
        #expect(back.bitPattern == nan.bitPattern)
    }

    @Test("Python's plistlib finds a 4-byte real holding exactly the Float's value")
    func pythonReadsFourByteReal() throws {
        let file = BinaryPropertyList.encode(.dictionary(["volume": .float(12.3), "ratio": .real(12.3)]))
        let output = try python("""
            import plistlib, struct, sys
            data = sys.stdin.buffer.read()
            value = plistlib.loads(data)
            single = struct.unpack('>f', struct.pack('>f', 12.3))[0]
            print(value['volume'] == single, value['ratio'] == 12.3, (b'\\x22' + struct.pack('>f', 12.3)) in data)
            """, input: file)
        #expect(String(decoding: output, as: UTF8.self) == "True True True\n")
    }

    @Test("XML has no 4-byte real: a Float exports with the digits of its Double value and reads back as a real that is still as? Float")
    func xmlWidens() throws {
        let xml = try PropertyListValue.array([.float(12.3)]).xmlPropertyListData()
        #expect(String(decoding: xml, as: UTF8.self).contains("<real>12.300000190734863</real>"))
        let back = try PropertyListValue(propertyListData: xml)
        #expect(back == .array([.real(Double(Float(12.3)))]))
        #expect((back.nativeValue as? [Float]) == [12.3])
    }

    @Test("Every reader of a .float sees 12.3: the native NSNumber prints it and casts to it")
    func nativeFloat() {
        let native = PropertyListValue.float(12.3).nativeValue
        #expect(native is NSNumber)
        #expect(native as? Float == 12.3)
        #expect(native as? Double == Double(Float(12.3)))
        #expect("\(native)" == "12.3")
        #expect(PropertyListValue(native) == .float(12.3), "a value read back must write back unchanged")
    }

    @Test("An NSNumber of Int8 (type code c, as CoreFoundation also stores small integers) is an integer, not a Bool")
    func int8NumberIsAnInteger() {
        #expect(PropertyListValue(NSNumber(value: Int8(-8))) == .integer(-8))
        #expect(PropertyListValue(NSNumber(value: Int8(1))) == .integer(1))
        #expect(PropertyListValue(NSNumber(value: true)) == .bool(true))
    }

    private func bigEndian(_ bits: UInt32) -> [UInt8] {
        [UInt8(bits >> 24), UInt8(truncatingIfNeeded: bits >> 16), UInt8(truncatingIfNeeded: bits >> 8), UInt8(truncatingIfNeeded: bits)]
    }
}
