import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("The old value of a typed entry changed elsewhere")
struct TypedOldValueOfExternalChangeTests {
    let directory = TemporaryDirectory()

    @Test(".old of a typed property, for a change made elsewhere, is the value before it")
    func typedOldValueOfExternalChange() throws {
        let a = TypedSettings(suite: try directory.fileSuite("typed"))
        let b = TypedSettings(suite: try directory.fileSuite("typed"))
        a.launchCount = 3
        a.watchesExternalChanges = true
        let seen = Locked<[(Int?, Int?)]>([])
        let token = a.observe(\.launchCount, options: [.old, .new]) { _, change in
            seen.withLock { $0.append((change.oldValue, change.newValue)) }
        }
        let before = a.externalChanges.deliveriesCompleted
        b.launchCount = 7
        #expect(a.externalChanges.waitForDeliveries(after: before) { !seen.withLock { $0 }.isEmpty })
        let got = seen.withLock { $0 }
        #expect(got.count == 1)
        #expect(got.first?.0 == 3, "old value of the external change: \(String(describing: got.first))")
        #expect(got.first?.1 == 7)
        token.invalidate()
    }
}
