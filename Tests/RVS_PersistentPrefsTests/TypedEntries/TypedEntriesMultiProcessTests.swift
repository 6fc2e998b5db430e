import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// The TestWorker's typed entries, declared again here: each process has its own types, and they meet only
/// in the domain file.
final class TypedWorkerSettings: RVS_PersistentPrefs {
    @Entry("window") var window = TypedFrame()
    @Entry("appearance") var appearance = TypedAppearance.system
    let suite: DefaultsSuite

    init(directory: String) throws {
        suite = DefaultsSuite(persistentDomain: try FileDomainStorage(directory: directory, name: "shared"), arguments: [])
        super.init(key: "settings")
    }

    override var userDefaults: DefaultsSuite? { suite }
}

@Suite("Typed entries between processes")
struct TypedEntriesMultiProcessTests {
    let directory = TemporaryDirectory()

    @Test("A Codable value written by one process is read by another")
    func codableWrittenByChildIsReadByParent() throws {
        let writer = try ChildProcess.worker("write-typed", directory.path, "shared", "settings", "1234", "dark")
        #expect(writer.readLine() == "ok", "worker failed: \(writer.readErrors())")
        #expect(writer.wait() == 0)
        let settings = try TypedWorkerSettings(directory: directory.path)
        #expect(settings.window == TypedFrame(x: 10, y: 20, width: 1234, height: 600))
        #expect(settings.appearance == .dark)
        #expect(settings.lastError == nil)
    }

    @Test("A Codable value written by this process is read by a child process; so is a value that does not decode")
    func codableWrittenByParentIsReadByChild() throws {
        let settings = try TypedWorkerSettings(directory: directory.path)
        settings.window = TypedFrame(x: 1, y: 2, width: 3, height: 4)
        settings.appearance = .light
        let reader = try ChildProcess.worker("read-typed", directory.path, "shared", "settings")
        #expect(reader.readLine() == "window 1.0 2.0 3.0 4.0 appearance light error none", "worker: \(reader.readErrors())")
        #expect(reader.wait() == 0)

        settings["window"] = ["width": "wide"]
        let second = try ChildProcess.worker("read-typed", directory.path, "shared", "settings")
        #expect(second.readLine() == "window 0.0 0.0 800.0 600.0 appearance light error window", "worker: \(second.readErrors())")
        #expect(second.wait() == 0)
    }
}
