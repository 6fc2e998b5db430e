import Foundation
@testable import PrefsStorage
import TestSupport

extension TemporaryDirectory {
    /// A suite over the domain file `<this directory>[/<subdirectory>]/<name>.plist`, with no argument
    /// domain. Each call opens the file afresh, so two suites from two calls are as two processes are.
    func fileSuite(_ name: String, in subdirectory: String? = nil) throws -> DefaultsSuite {
        let domain = try FileDomainStorage(directory: subdirectory.map(appending) ?? path, name: name)
        return DefaultsSuite(persistentDomain: domain, arguments: [])
    }
}
