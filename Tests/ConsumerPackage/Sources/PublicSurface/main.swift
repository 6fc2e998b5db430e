// Every public declaration of the library's RVS_PersistentPrefs product (with the PrefsStorage and PrefsPropertyList
// declarations it re-exports), named and used from outside the package, as an application sees them (no
// @testable); the one exception is `Entry`'s `wrappedValue`, unavailable by design (an `@Entry` is reached through
// its enclosing instance). PrefsEtcd's and PrefsStorageTesting's are used in part by EtcdFleet and CustomBackend,
// and the rest by the package's own tests. `.ci/run` builds this with warnings as errors and runs it. A
// declaration that disappears or changes its shape breaks the build; a behaviour that changes stops the run with
// the line.
// Enumerations are switched over exhaustively, so that a case added or removed is noticed here too.
// (The members that standard protocols give OptionSet and AsyncSequence are the standard library's.)
import Foundation
import RVS_PersistentPrefs

func check(_ condition: Bool, _ message: @autoclosure () -> String = "", line: Int = #line) {
    precondition(condition, "PublicSurface.swift:\(line): \(message())")
}

/// A failure expected to be a `PrefsError`.
func prefsError(_ body: () throws -> Void) -> PrefsError? {
    do { try body() } catch let error as PrefsError { return error } catch { check(false, "\(error)") }
    return nil
}

// A watchdog: a change that is never delivered stops the run instead of hanging CI.
DispatchQueue.global().asyncAfter(deadline: .now() + 120) { fatalError("PublicSurface: timed out") }

let root = FileManager.default.temporaryDirectory.appendingPathComponent("public-surface-\(UUID().uuidString)").path

// MARK: Property-list values and their codec

let sample: PropertyListValue = .dictionary([
    "string": .string("text"), "bool": .bool(true), "integer": .integer(3), "real": .real(1.5),
    "float": .float(0.25), "date": .date(Date(timeIntervalSince1970: 0)), "data": .data(Data([1, 2])),
    "array": .array([.integer(1)]),
])
func typeName(_ value: PropertyListValue) -> String {
    switch value {
    case .string: "string"
    case .bool: "bool"
    case .integer: "integer"
    case .unsignedInteger: "unsigned integer"
    case .real: "real"
    case .float: "float"
    case .date: "date"
    case .data: "data"
    case .array: "array"
    case .dictionary: "dictionary"
    }
}
let sampleEntries = sample.dictionaryValue ?? [:]
check(sampleEntries.count == 8 && typeName(sample) == "dictionary")
let decodedBinary = try PropertyListValue(propertyListData: sample.binaryPropertyListData())
check(decodedBinary.dictionaryValue?["string"] == .string("text") && decodedBinary.dictionaryValue?["array"] == .array([.integer(1)]))
let xmlText = String(decoding: try sample.xmlPropertyListData(), as: UTF8.self)
check(try PropertyListValue(propertyListText: xmlText).dictionaryValue?["integer"] == .integer(3))
check(PropertyListValue(["count": 1] as [String: Any]) == .dictionary(["count": .integer(1)]))
check(PropertyListValue(NSNull()) == nil, "NSNull is not a property-list value")
check(PropertyListValue(UInt64.max) == .unsignedInteger(.max) && typeName(.unsignedInteger(.max)) == "unsigned integer")
check(PropertyListValue.unsignedInteger(.max).nativeValue as? UInt64 == .max)
check((sample.nativeValue as? [String: Any])?["string"] as? String == "text")
do {
    _ = try PropertyListValue(propertyListData: Data("not a property list".utf8))
    check(false, "garbage decoded")
} catch {
    let failure: PropertyListCodingError = error
    check(!failure.reason.isEmpty && !failure.description.isEmpty)
}

// The Codable encoder and decoder, and a bridge of one's own.
struct Size: Codable, Equatable { var width = 1, height = 2 }
let encodedSize = try PropertyListValue(encoding: Size())
check(try encodedSize == .dictionary(["width": .integer(1), "height": .integer(2)]) && encodedSize?.decode(Size.self) == Size())
check(try PropertyListValue(encoding: Int?.none) == nil)
struct Celsius: Equatable, Sendable { var degrees: Double }
struct CelsiusBridge: PropertyListBridge {
    struct NotANumber: Error {}
    func serialize(_ value: Celsius) throws -> PropertyListValue? { .string("\(value.degrees)C") }
    func deserialize(_ stored: PropertyListValue) throws -> Celsius {
        guard case .string(let text) = stored, text.hasSuffix("C"), let degrees = Double(text.dropLast()) else { throw NotANumber() }
        return Celsius(degrees: degrees)
    }
}
let celsiusBridge: any PropertyListBridge<Celsius> = CelsiusBridge()
check(try celsiusBridge.deserialize(celsiusBridge.serialize(Celsius(degrees: 21.5))!) == Celsius(degrees: 21.5))

// MARK: Domains

func location(of domain: some DomainStorage) -> String { domain.location }
let memory = InMemoryDomainStorage(contents: ["k": .integer(1)], location: "memory")
check(location(of: memory) == "memory" && memory.location == "memory")
try memory.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(2) }
check(try memory.isKnownToExist && memory.snapshot().contents["k"] == .integer(2))
check(DomainSnapshot(contents: ["x": .bool(true)]).contents == ["x": .bool(true)])

let file = try FileDomainStorage(directory: root + "/domains", name: "app")
check(file.path == root + "/domains/app.plist" && file.directory == root + "/domains" && !file.durable)
try file.modify(repairing: .moveUnreadableAside) { $0["k"] = .string("v") }
check(try file.isKnownToExist && file.snapshot().contents["k"] == .string("v") && location(of: file) == file.path)
try file.removeDomainFile()
check(!FileManager.default.fileExists(atPath: file.path))
let sharedFile = try FileDomainStorage.shared(directory: root + "/domains", name: "app", durable: true)
let sharedAgain = try FileDomainStorage.shared(directory: root + "/domains", name: "app", durable: true)
check(sharedFile === sharedAgain && sharedFile.durable)
for policy in [RepairPolicy.failIfUnreadable, .moveUnreadableAside] {
    switch policy {
    case .failIfUnreadable, .moveUnreadableAside: break
    }
}
DomainWatching.pollingInterval = .milliseconds(500)
check(DomainWatching.pollingInterval == .milliseconds(500))

// MARK: Errors, named from the outside, each case switched over

func describe(_ error: PrefsError) -> String {
    switch error {
    case .incorrectKeys(let names), .valuesNotPlistCompatible(let names): names.joined(separator: ",")
    case .userDefaultsUnavailable(let reason): reason
    case .invalidStoredValue(let key), .noStoredPrefsForKey(let key): key
    case .invalidStoredEntry(let entry, let reason), .valueNotAllowed(let entry, let reason): "\(entry): \(reason)"
    case .domainUnreadable(let path, let reason): "\(path): \(reason)"
    case .readFailed(let path, let step, let errno), .writeFailed(let path, let step, let errno):
        "\(path) \(stepName(step)) \(step.description) \(step.isAfterReplacement) \(errno.rawValue) \(errno.description)"
    case .domainTooLarge(let path, let size, let limit): "\(path) \(size) \(limit)"
    case .collectionFromNewerVersion(let stored, let supported): "\(stored) > \(supported)"
    case .forcedByAdministrator(let entries, let path): "\(entries) \(path)"
    case .administratorFileIgnored(let path, let reason): "\(path): \(reason)"
    case .storageUnreachable(let location, let reason), .outcomeUnknown(let location, let reason): "\(location): \(reason)"
    case .unknownError(let underlying): String(describing: underlying)
    }
}
func stepName(_ step: PrefsError.Step) -> String {
    switch step {
    case .stat: "stat"
    case .open: "open"
    case .fstat: "fstat"
    case .read: "read"
    case .close: "close"
    case .createDirectory(let path), .openLockFile(let path), .lock(let path), .keepUnreadableFileAside(let path),
         .createTemporaryFile(let path), .writeTemporaryFile(let path), .syncTemporaryFile(let path),
         .closeTemporaryFile(let path), .renameOverDomainFile(let path), .syncDirectory(let path),
         .removeDomainFile(let path):
        path
    }
}
let errnos: [RVS_PersistentPrefs.Errno] = [.noSuchFileOrDirectory, .permissionDenied, .readOnlyFileSystem, .noSpace,
                                          .fileExists, .interrupted, .ioError]
check(Set(errnos.map(\.rawValue)).count == errnos.count && errnos.allSatisfy { !$0.description.isEmpty })
check(PrefsErrno(rawValue: ENOSPC) == .noSpace)

// An unreadable domain file: reported with its path, never parsed into anything.
let garbled = try FileDomainStorage(directory: root + "/garbled", name: "app")
try FileManager.default.createDirectory(atPath: root + "/garbled", withIntermediateDirectories: true)
try Data("not a property list".utf8).write(to: URL(fileURLWithPath: garbled.path))
let unreadable: RVS_PersistentPrefs.PrefsError? = prefsError { _ = try garbled.snapshot() }
if case .domainUnreadable(let path, _)? = unreadable { check(path == garbled.path) } else { check(false, "\(String(describing: unreadable))") }
check(describe(unreadable!).contains(garbled.path) && unreadable!.localizedDescription.contains(garbled.path))

// A directory that cannot be made: the failing step, its path and the errno.
_ = FileManager.default.createFile(atPath: root + "/a-file", contents: Data())
let blocked = try FileDomainStorage(directory: root + "/a-file/below", name: "app")
let creation = prefsError { try blocked.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) } }
if case .writeFailed(_, .createDirectory, let errno)? = creation {
    check(errno == PrefsErrno(rawValue: ENOTDIR), describe(creation!))
} else {
    check(false, "\(String(describing: creation))")
}

// MARK: Where the files are

let locations = DefaultsLocations(preferencesDirectory: root + "/prefs", groupContainer: root + "/group", applicationDomainName: "surface")
check(locations.preferencesDirectory == root + "/prefs" && locations.groupContainer == root + "/group"
    && locations.applicationDomainName == "surface")
check(try locations.applicationDomain().path == root + "/prefs/surface.plist")
check(try locations.globalDomain().path == root + "/prefs/\(DefaultsLocations.globalDomainName).plist")
check(try locations.applicationSuite().persistentDomainName == "surface")
check(try locations.groupSuite("group.surface").persistentDomain.location == root + "/group/group.surface.plist")
check(DefaultsLocations.directoryVariable == "RVS_PREFS_DIRECTORY" && !DefaultsLocations.groupContainerVariable.isEmpty)
check(!DefaultsLocations.executableName.isEmpty)
check(DefaultsLocations.preferencesDirectory(environment: [DefaultsLocations.directoryVariable: root + "/env"]) == root + "/env")
check(DefaultsLocations.current(applicationDomainName: "n", environment: [DefaultsLocations.directoryVariable: root + "/env"])
    .preferencesDirectory == root + "/env")

// MARK: A suite, through the UserDefaults API and its typed forms

let suite = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: root + "/suite", name: "app"),
                          globalDomain: InMemoryDomainStorage(contents: ["fromGlobal": .string("g")]),
                          arguments: ["program", "-fromArguments", "7"])
suite.register(defaults: ["registered": 1])
suite.register(propertyListDefaults: ["registeredPlist": .bool(true)])
suite.set("text", forKey: "string")
suite.set(42, forKey: "integer")
suite.set(2.5, forKey: "double")
suite.set(Float(0.5), forKey: "float")
suite.set(true, forKey: "bool")
suite.set(Data([1]), forKey: "data")
suite.set(["a", "b"], forKey: "strings")
suite.set(["k": 1], forKey: "dictionary")
suite.set("/tmp/file", forKey: "path")  // a URL is stored as its path (see url(forKey:))
check(suite.lastError == nil, "\(String(describing: suite.lastError))")
check(suite.string(forKey: "string") == "text" && suite.integer(forKey: "integer") == 42)
check(suite.double(forKey: "double") == 2.5 && suite.float(forKey: "float") == 0.5 && suite.bool(forKey: "bool"))
check(suite.data(forKey: "data") == Data([1]) && suite.array(forKey: "strings")?.count == 2)
check(suite.stringArray(forKey: "strings") == ["a", "b"] && suite.dictionary(forKey: "dictionary")?["k"] as? Int == 1)
check(suite.url(forKey: "path") == URL(fileURLWithPath: "/tmp/file") && suite.object(forKey: "registered") as? Int == 1)
check(suite.string(forKey: "fromGlobal") == "g" && suite.argumentDomain["fromArguments"] != nil)
check(suite.registrationDomain["registeredPlist"] == .bool(true) && suite.globalDomain != nil)
check(suite.volatileDomain(forName: "NSRegistrationDomain")["registered"] as? Int == 1)
for (key, expected) in [("fromArguments", SearchDomain.arguments), ("integer", .persistent), ("fromGlobal", .global),
                        ("registered", .registration)] {
    let found = try suite.lookup(key)
    check(found?.domain == expected, key)
    // A struct of roles: a later kind of domain breaks no switch, which therefore needs a default.
    switch found?.domain {
    case .arguments?, .persistent?, .global?, .registration?, .managed?, .system?, nil: break
    default: check(false, "unknown role \(String(describing: found?.domain))")
    }
    check(found.map { $0.domain.name == $0.domain.description } ?? false)
}
try suite.setValue(.integer(5), forKey: "typed")
try suite.modifyValue(forKey: "typed") { $0 = .integer(6) }
check(try suite.value(forKey: "typed") == .integer(6) && suite.propertyListRepresentation()["typed"] == .integer(6))
try suite.removeValue(forKey: "typed")
check(try suite.value(forKey: "typed") == nil)
suite.removeObject(forKey: "string")
check(suite.string(forKey: "string") == nil && suite.synchronize() && suite.dictionaryRepresentation()["integer"] as? Int == 42)
suite.set(NSNull(), forKey: "null")
if case .valuesNotPlistCompatible? = suite.lastError {} else { check(false, "\(String(describing: suite.lastError))") }
suite.setPersistentDomain(["replaced": 1], forName: suite.persistentDomainName)
check(suite.persistentDomain(forName: suite.persistentDomainName)?["replaced"] as? Int == 1)
suite.removePersistentDomain(forName: suite.persistentDomainName)
check(suite.persistentDomain(forName: suite.persistentDomainName) == nil && suite.lastError == nil)
suite.set(URL(fileURLWithPath: "/tmp/a file"), forKey: "fileURL")
suite.set(URL(string: "https://example.com/x")!, forKey: "webURL")
check(suite.string(forKey: "fileURL") == "/tmp/a file" && suite.url(forKey: "fileURL") == URL(fileURLWithPath: "/tmp/a file"))
check(suite.url(forKey: "webURL") == URL(string: "https://example.com/x"))
suite.setVolatileDomain(["volatile": true], forName: "Scratch")
check(suite.volatileDomainNames.contains("Scratch") && suite.volatileDomain(forName: "Scratch")["volatile"] as? Bool == true)
suite.removeVolatileDomain(forName: "Scratch")
check(!suite.volatileDomainNames.contains("Scratch"))
nonisolated(unsafe) var suiteChanges = 0
let changeObserver = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: suite, queue: nil) { _ in
    suiteChanges += 1
}
suite.set(1, forKey: "notified")
NotificationCenter.default.removeObserver(changeObserver)
check(suiteChanges == 1, "\(suiteChanges)")
let processSuite = DefaultsSuite.shared(persistentDomain: sharedFile, globalDomain: nil)
check(processSuite === DefaultsSuite.shared(persistentDomain: sharedFile, globalDomain: nil))

// MARK: The base class: configuration, entries, observation

setenv(DefaultsLocations.directoryVariable, root + "/app", 1)
RVS_PersistentPrefs.applicationDomainName = "surface"
RVS_PersistentPrefs.groupContainerDirectory = root + "/group"
RVS_PersistentPrefs.groupID = nil
RVS_PersistentPrefs.durableWrites = false
check(RVS_PersistentPrefs.applicationDomainName == "surface" && RVS_PersistentPrefs.groupContainerDirectory == root + "/group"
    && RVS_PersistentPrefs.groupID == nil && !RVS_PersistentPrefs.durableWrites && RVS_PersistentPrefs.changeBufferLimit > 0)

final class Untyped: RVS_PersistentPrefs {
    override var keys: [String] { ["name", "size"] }
    var name: String {
        get { self["name"] as? String ?? "" }
        set { self["name"] = newValue }
    }
}

let byName = Untyped()
check(byName.key == "Untyped" && byName.userDefaults != nil && byName.lastError == nil && byName.lastWarnings.isEmpty)
byName["name"] = "first"
check(FileManager.default.fileExists(atPath: root + "/app/surface.plist") && byName.count == 1)
byName.values = ["name": "second", "size": 2]
check(byName.values["size"] as? Int == 2 && Untyped(key: "Untyped", values: nil).name == "second")
byName["unknown"] = 1
if case .incorrectKeys(let names)? = byName.lastError { check(names == ["unknown"]) } else { check(false) }
byName.key = "renamed"
check(byName.values.isEmpty)
byName.key = "Untyped"
byName.flush()
byName.clear()
check(byName.values.isEmpty && byName.lastError == nil)

var heard: [String] = []
let token: NSKeyValueObservation = byName.observe(\.name, options: [.initial, .old, .new, .prior]) {
    (_: Untyped, change: NSKeyValueObservedChange<String>) in
    switch change.kind {
    case .setting: heard.append("\(change.isPrior ? "prior" : "after") \(change.oldValue ?? "-") \(change.newValue ?? "-")")
    }
}
let options: NSKeyValueObservingOptions = [.new]
check(options.contains(.new) && !options.contains(PrefsObservingOptions.old))
byName.name = "observed"
let silentResult = byName.withoutNotifying { () -> Int in
    byName.name = "silent"
    return 1
}
check(silentResult == 1 && byName.name == "silent")
token.invalidate()
byName.name = "unheard"
check(heard == ["after - ", "prior  -", "after  observed"], "\(heard)")
func observeName<Prefs: PrefsObserving>(of prefs: Prefs, _ keyPath: KeyPath<Prefs, String>) -> PrefsObservation
    where Prefs: RVS_PersistentPrefs {
    prefs.observe(keyPath, options: [.new]) { _, _ in }
}
observeName(of: byName, \.name).invalidate()

func firstChange(writing name: String, to prefs: Untyped) async -> PrefsChange? {
    var collections = prefs.changes.makeAsyncIterator()
    prefs.name = name
    return await collections.next()
}
let change = await firstChange(writing: "streamed", to: byName)
check(change?.values["name"] as? String == "streamed" && change?.collection["name"] == .string("streamed"))

enum Theme: String, Codable, Sendable { case light, dark }          // RawRepresentable and Codable
enum Level: Int, Sendable { case low = 1, high = 2 }                // RawRepresentable only
struct Frame: Codable, Equatable, Sendable { var width = 800.0 }    // Codable only

final class Typed: RVS_PersistentPrefs {
    @Entry("launchCount") var launchCount = 0
    @Entry("theme") var theme = Theme.light
    @Entry("level") var level = Level.low
    @Entry("frame") var frame = Frame()
}

// Typed entries, complete, and schema evolution.
final class Evolved: RVS_PersistentPrefs {
    override class var schemaVersion: Int { 1 }
    override func migrate(_ values: inout [String: Any], from version: Int) { values["migrated"] = version }
    override var keys: [String] { super.keys + ["migrated"] }
    @Entry("volume", formerly: ["vol"]) var volume: Float = 0.5
    @Entry("theme", upgrading: { (old: Bool) in old ? Theme.dark : Theme.light }) var theme = Theme.light
    @Entry("levels") var levels: [Level] = []
    @Entry("maybeLevel") var maybeLevel: Level? = nil
    @Entry("levelSet") var levelSet: Set<Level> = []
    @Entry("levelByName") var levelByName: [String: Level] = [:]
    @Entry("outside", bridge: CelsiusBridge()) var outside = Celsius(degrees: 10)
}
let evolvedSuite = DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: [])
try evolvedSuite.setValue(.dictionary(["vol": .float(0.25), "theme": .bool(true)]), forKey: "evolved")
let evolved = Evolved(key: "evolved", suite: evolvedSuite)
check(Evolved.schemaVersion == 1 && RVS_PersistentPrefs.schemaVersion == 0 && evolved.values["migrated"] as? Int == 0)
check(evolved.volume == 0.25 && evolved.theme == .dark && evolved.$volume.formerNames == ["vol"])
evolved.volume = 0.75
check(evolved.values["vol"] == nil && evolved.values["volume"] as? Float == 0.75)
evolved.levels = [.high]
evolved.maybeLevel = .low
evolved.levelSet = [.low]
evolved.levelByName = ["a": .high]
evolved.outside = Celsius(degrees: -3)
check(evolved.values["levels"] as? [Int] == [2] && evolved.values["outside"] as? String == "-3.0C")
check(!evolved.isDefaultValue(\.$volume))
evolved.reset(\.$volume)
check(evolved.isDefaultValue(\.$volume) && evolved.values["volume"] == nil)
func nextVolume(_ prefs: Evolved) async -> Float? {
    var volumes = prefs.updates(of: \.$volume, initial: false).makeAsyncIterator()
    prefs.volume = 0.1
    return await volumes.next()
}
check(await nextVolume(evolved) == 0.1)
final class OlderEvolved: RVS_PersistentPrefs {
    @Entry("volume") var volume: Float = 0.5
}
let older = OlderEvolved(key: "evolved", suite: evolvedSuite)
older.volume = 1
if case .collectionFromNewerVersion(1, 0)? = older.lastError {} else { check(false, "\(String(describing: older.lastError))") }

// Constraints and the schema tools read (SPEC §14): each constraint initializer of @Entry, the refusal on the
// instance and on its UserDefaults face, and PrefsSchema with every member and its file's bytes.
final class Constrained: RVS_PersistentPrefs {
    @Entry("port", range: 1...65535, description: "The port") var port = 8080
    @Entry("volume", range: 0.0...1.0) var volume = 0.5
    @Entry("level", allowed: ["debug", "info"], description: "How much to log") var level = "info"
    @Entry("title", description: "Shown in the title bar") var title = "untitled"
    override var keys: [String] { super.keys + ["untyped"] }
}
let constrainedSuite = DefaultsSuite(persistentDomain: InMemoryDomainStorage(), arguments: [])
let constrained = Constrained(key: "constrained", suite: constrainedSuite)
check(constrained.lastError == nil && constrained.lastWarnings.isEmpty)
constrained.port = 70000
if case .valueNotAllowed(let entry, let reason)? = constrained.lastError {
    check(entry == "port" && reason.contains("65535"), reason)
} else { check(false, "\(String(describing: constrained.lastError))") }
check(constrained.port == 8080)
constrained.level = "debug"
check(constrained.lastError == nil && constrained.level == "debug")
constrainedSuite.set(["volume": 2.0], forKey: "constrained")
if case .valueNotAllowed("volume", _)? = constrainedSuite.lastError {} else { check(false, "\(String(describing: constrainedSuite.lastError))") }
let schema: PrefsSchema = constrained.schema
check(schema.storageKey == "constrained" && schema.entries.map(\.name) == ["level", "port", "title", "untyped", "volume"])
let portEntry: PrefsSchema.Entry = schema.entries[1]
check(portEntry.type == "integer" && portEntry.defaultValue == .integer(8080) && portEntry.range == 1...65535)
check(portEntry.allowed == nil && portEntry.description == "The port" && portEntry.formerNames.isEmpty)
check(evolved.schema.entries.first { $0.name == "volume" }?.formerNames == ["vol"])
check(schema.entries[0].allowed == [.string("debug"), .string("info")] && schema.entries[3].type == nil)
check(schema == constrained.schema)
let schemaBytes: Data = try schema.propertyListData()
check(try PropertyListValue(propertyListData: schemaBytes).dictionaryValue?["constrained"]?.dictionaryValue?.count == 5)

let suiteA = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: root + "/typed", name: "app"), arguments: [])
let suiteB = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: root + "/typed", name: "app"), arguments: [])
let typed = Typed(key: "typed", values: [:], suite: suiteA)
check(typed.keys == ["frame", "launchCount", "level", "theme"] && typed.$launchCount.name == "launchCount")
check(typed.$launchCount.defaultValue == 0)
check(typed.$theme.projectedValue.name == "theme")
typed.theme = .dark
typed.level = .high
typed.frame.width = 1024
check(typed.values["theme"] as? String == "dark" && typed.values["level"] as? Int == 2)
check(try typed.value(of: \.$frame) == Frame(width: 1024))
check(typed.modify(\.$launchCount) { $0 += 1 } == 1 && typed.modify("launchCount") { ($0 as? Int ?? 0) + 1 } as? Int == 2)

// Changes made elsewhere (another suite over the same file, as another process would be) are heard.
let other = Typed(key: "typed", suite: suiteB)
typed.watchesExternalChanges = true
check(typed.watchesExternalChanges)
/// The current value, then the one after `other` writes `value`.
func launchCounts(of prefs: Typed, whenElsewhere other: Typed, writes value: Int) async -> [Int?] {
    var counts = prefs.updates(of: \.$launchCount).makeAsyncIterator()
    let current = await counts.next()
    other.launchCount = value
    return [current, await counts.next()]
}
check(await launchCounts(of: typed, whenElsewhere: other, writes: 10) == [2, 10])
func firstIsEven(_ prefs: Typed) async -> Bool? {
    var evenness = prefs.updates(of: \.$launchCount).map { $0 % 2 == 0 }.makeAsyncIterator()
    return await evenness.next()
}
check(await firstIsEven(typed) == true)
typed.watchesExternalChanges = false

typed.deleteAll()
check(typed.lastError == nil && other.values.isEmpty && typed.count == 0)

// MARK: Administrators' forced entries, backends' defaults, and the rest

// Where forced (managed) files live, named from the outside, and a suite over a managed directory given.
check(DefaultsLocations.managedDirectoryVariable == "RVS_PREFS_MANAGED_DIRECTORY")
check(DefaultsLocations.stateDirectoryVariable == "STATE_DIRECTORY")
check(DefaultsLocations.defaultManagedDirectory == "/etc/RVS_PersistentPrefs/managed")
check(DefaultsLocations.current(applicationDomainName: "n", environment: [
    DefaultsLocations.directoryVariable: root + "/env", DefaultsLocations.managedDirectoryVariable: root + "/managed",
]).managedDirectory == root + "/managed")
// With no home at all, a service's state directory holds its preferences.
check(DefaultsLocations.preferencesDirectory(environment: ["HOME": "/", DefaultsLocations.stateDirectoryVariable: root + "/state"])
    == root + "/state")
let managedLocations = DefaultsLocations(preferencesDirectory: root + "/prefs", applicationDomainName: "surface",
                                         systemDirectories: [root + "/system"], managedDirectory: root + "/managed")
check(managedLocations.systemDirectories == [root + "/system"] && managedLocations.managedDirectory == root + "/managed")
try FileManager.default.createDirectory(atPath: root + "/managed", withIntermediateDirectories: true)
chmod(root + "/managed", 0o755)
let forcedFile = root + "/managed/surface.plist"
check(FileManager.default.createFile(atPath: forcedFile, contents: try PropertyListValue.dictionary([
    "settings": .dictionary(["name": .string("forced")]), "forcedKey": .integer(1),
]).binaryPropertyListData()))
chmod(forcedFile, 0o644)
let managedSuite = try managedLocations.applicationSuite()
check(managedSuite.objectIsForced(forKey: "forcedKey") && !managedSuite.objectIsForced(forKey: "free"))
check(managedSuite.objectIsForced(forKey: "forcedKey", inDomain: "surface")
    && !managedSuite.objectIsForced(forKey: "forcedKey", inDomain: "elsewhere"))
let managedUntyped = Untyped(key: "settings", values: [:], suite: managedSuite)
check(managedUntyped.isForced("name") && !managedUntyped.isForced("size") && managedUntyped.name == "forced")
final class ForcedTyped: RVS_PersistentPrefs {
    @Entry("name") var name = ""
    @Entry("size") var size = 0
}
let managedTyped = ForcedTyped(key: "settings", values: [:], suite: managedSuite)
check(managedTyped.isForced(\.$name) && !managedTyped.isForced(\.$size) && managedTyped.name == "forced")

// A backend of one's own that says nothing of generations or changes: the protocol's defaults.
final class OptimisticMemory: OptimisticDomainStorage {
    let inner = InMemoryDomainStorage()
    var location: String { "optimistic-memory" }
    func snapshot() throws(PrefsError) -> DomainSnapshot { try inner.snapshot() }
    func modify(repairing policy: RepairPolicy,
                _ transform: (inout [String: PropertyListValue]) throws(PrefsError) -> Void) throws(PrefsError) -> DomainSnapshot {
        try inner.modify(repairing: policy, transform)
    }
}
let optimistic = OptimisticMemory()
check(optimistic.generation == nil && optimistic.watchChanges({}) == nil && !optimistic.isKnownToExist)
check(optimistic.watchChanges(handingOver: { _ in }) == nil)
let optimisticPrefs = Untyped(key: "settings", values: [:], suite: DefaultsSuite(persistentDomain: optimistic, arguments: []))
optimisticPrefs.name = "written"
let optimisticStored = try optimistic.snapshot().contents["settings"]?.dictionaryValue?["name"]
check(optimisticPrefs.lastError == nil && optimisticPrefs.name == "written" && optimisticStored == .string("written"))
// The shipped backends' generations move with their writes, and their watches can be cancelled.
let memoryDomain = InMemoryDomainStorage()
let memoryBefore = memoryDomain.generation
_ = try memoryDomain.modify(repairing: .failIfUnreadable) { $0["k"] = .integer(1) }
check(memoryBefore != nil && memoryDomain.generation != memoryBefore)
let memoryWatch = memoryDomain.watchChanges {}
check(memoryWatch != nil)
memoryWatch?.cancel()
let fileDomain = try FileDomainStorage(directory: root + "/generations", name: "file")
_ = fileDomain.generation  // `nil` until a suite's watch of the file vouches for it: no value is promised here
let fileWatch = fileDomain.watchChanges {}
check(fileWatch != nil)
fileWatch?.cancel()

// Errors say what happened in words, through LocalizedError.
check(PrefsErrno.noSpace.errorDescription?.isEmpty == false)
do {
    _ = try PropertyListValue(propertyListData: Data([0x62, 0x70]))
    check(false, "two bytes decoded")
} catch {
    let failure: PropertyListCodingError = error
    check(failure.errorDescription?.isEmpty == false)
}

// The observing options are an OptionSet over their raw value.
check(PrefsObservingOptions(rawValue: PrefsObservingOptions.new.rawValue) == .new && PrefsObservingOptions.old.rawValue != 0)

// Entries that upgrade a value stored by an earlier version: a Codable value, and a RawRepresentable one that is not Codable.
struct Extent: Codable, Equatable, Sendable { var width: Int }
enum Mode: String, Sendable { case quiet, loud }
final class Upgraded: RVS_PersistentPrefs {
    @Entry("size", upgrading: { (old: Int) in Extent(width: old) }) var size = Extent(width: 1)
    @Entry("mode", upgrading: { (old: Bool) in old ? Mode.loud : Mode.quiet }) var mode = Mode.quiet
}
let upgradedDomain = InMemoryDomainStorage()
_ = try upgradedDomain.modify(repairing: .failIfUnreadable) {
    $0["settings"] = .dictionary(["size": .integer(3), "mode": .bool(true)])
}
let upgraded = Upgraded(key: "settings", values: [:], suite: DefaultsSuite(persistentDomain: upgradedDomain, arguments: []))
check(upgraded.size == Extent(width: 3) && upgraded.mode == .loud, "\(upgraded.size) \(upgraded.mode)")

try? FileManager.default.removeItem(atPath: root)
print("PublicSurface: every public declaration of the RVS_PersistentPrefs product used from a consumer package, and each behaved as documented")
