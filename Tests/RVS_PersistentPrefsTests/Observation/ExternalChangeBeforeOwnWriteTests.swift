import Foundation
import Observation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("A change made elsewhere just before an own write of another entry is still told")
struct ExternalChangeBeforeOwnWriteTests {
    let directory = TemporaryDirectory()

    @Test("an external change to one entry, then an own write of another, reaches the first entry's readers")
    func externalChangeBeforeOwnWriteIsTold() throws {
        let a = TrackedPrefs(suite: try directory.fileSuite("tracked"))
        let b = TrackedPrefs(suite: try directory.fileSuite("tracked"))
        a.volume = 1
        a.watchesExternalChanges = true
        let nameRead = track(a) { _ = $0.userName }
        let names = Locked<[(String?, String?)]>([])
        let token = a.observe(\.userName, options: [.old, .new]) { _, change in
            names.withLock { $0.append((change.oldValue, change.newValue)) }
        }
        let before = a.externalChanges.deliveriesCompleted
        // Holding A's lock stands for A being busy: the delivery of B's change waits until A's own write is done.
        a.operationLock.lock()
        b.userName = "changed elsewhere"
        a.volume = 2
        a.operationLock.unlock()
        #expect(a.externalChanges.waitForDeliveries(after: before) { names.withLock { $0 }.count >= 2 })
        #expect(a.userName == "changed elsewhere")
        #expect(nameRead.count == 1, "userName's Swift Observation reader was never told")
        // Every own write tells every key-path observer; the change made elsewhere is told after it, from
        // the value the instance last saw.
        let told = names.withLock { $0 }
        #expect(told.count == 2, "userName's key-path observer: \(told)")
        #expect(told.last?.0 == "" && told.last?.1 == "changed elsewhere", "userName's key-path observer: \(told)")
        token.invalidate()
    }
}
