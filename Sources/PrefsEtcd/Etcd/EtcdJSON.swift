import Foundation

/// The JSON of etcd's gateway: keys and values base64, 64-bit numbers as strings, fields left out when they hold
/// their default (false, 0, empty).
enum EtcdJSON {
    /// A JSON object of a request or response.
    typealias Object = [String: Any]

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    static func base64(_ text: String) -> String { base64(Array(text.utf8)) }

    static func bytes(base64 text: Any?) -> [UInt8]? {
        guard let text = text as? String else { return nil }
        return Data(base64Encoded: text).map { [UInt8]($0) }
    }

    /// A 64-bit number, sent as a string or a number.
    static func int(_ value: Any?) -> Int64 {
        if let text = value as? String { return Int64(text) ?? 0 }
        if let number = value as? NSNumber { return number.int64Value }
        return 0
    }

    static func encode(_ object: Object) -> [UInt8] {
        // Only dictionaries, arrays, strings, numbers and booleans are ever built here.
        (try? [UInt8](JSONSerialization.data(withJSONObject: object))) ?? []
    }

    static func decode(_ bytes: [UInt8]) -> Object? {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? Object
    }

    /// The header's cluster-wide revision.
    static func revision(of response: Object) -> Int64 { int((response["header"] as? Object)?["revision"]) }
}

/// One key and its value as etcd returns it.
struct EtcdKeyValue: Sendable {
    var key: [UInt8]
    var value: [UInt8]
    /// The revision of the key's last change.
    var modRevision: Int64

    init(key: [UInt8], value: [UInt8], modRevision: Int64) {
        self.key = key
        self.value = value
        self.modRevision = modRevision
    }

    init?(_ object: Any?) {
        guard let object = object as? EtcdJSON.Object, let key = EtcdJSON.bytes(base64: object["key"]) else { return nil }
        self.key = key
        value = EtcdJSON.bytes(base64: object["value"]) ?? []
        modRevision = EtcdJSON.int(object["mod_revision"])
    }

    /// The key-values of a range response.
    static func all(in range: EtcdJSON.Object?) -> [EtcdKeyValue] {
        ((range?["kvs"] as? [Any]) ?? []).compactMap(EtcdKeyValue.init)
    }
}
