import Testing
@testable import RVS_PersistentPrefs

/// Every read the base class offers on an instance. Each one starts a new operation, so it sets `lastError`.
enum BaseClassRead: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case values = "prefs.values (get)"
    case subscriptGet = "prefs[name] (get)"
    case count = "prefs.count"
    case flush = "prefs.flush()"

    var testDescription: String { rawValue }

    func perform(on prefs: RVS_PersistentPrefs) {
        switch self {
        case .values: _ = prefs.values
        case .subscriptGet: _ = prefs["appearance"]
        case .count: _ = prefs.count
        case .flush: prefs.flush()
        }
    }
}

/// Every operation on an instance that exists: each read, and each write of `BaseClassWriteKind`
/// but the initializer's merge. For the rules about `lastError`, which every operation sets.
enum BaseClassOperation: Sendable, CustomTestStringConvertible {
    case read(BaseClassRead)
    case write(BaseClassWriteKind)

    static var allCases: [BaseClassOperation] {
        BaseClassRead.allCases.map(read) + BaseClassWriteKind.allCases.filter { !$0.isInitializer }.map(write)
    }

    var testDescription: String {
        switch self {
        case .read(let read): return read.testDescription
        case .write(let write): return write.testDescription
        }
    }

    func perform(on prefs: some BaseClassWriteTarget) {
        switch self {
        case .read(let read): read.perform(on: prefs)
        case .write(let write): write.perform(on: prefs)
        }
    }
}
