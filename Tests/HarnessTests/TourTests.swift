import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("The tour: harness with no arguments")
struct HarnessTourTests {
    let sandbox = HarnessSandbox()

    @Test("harness alone runs every demo, explains them, exits 0, and removes its private temporary directory")
    func tourRunsEveryDemoAndCleansUp() throws {
        let run = try sandbox.run([])
        #expect(run.status == 0, "standard error: \(run.errors)")
        #expect(run.errors.isEmpty)
        for section in ["1. harness settings-bridge", "2. harness bindings", "3. harness share", "4. harness defaults"] {
            #expect(run.lines.contains { $0.hasPrefix(section) }, "missing section \(section)")
        }
        // The helper really ran as a second process, and its lines came back through the pipe.
        #expect(run.lines.contains { $0.hasPrefix("helper: sees appSays = \"Hello from the app\"") })
        #expect(run.lines.contains { $0.hasPrefix("app: sees helperSays = \"Hello back from the helper\"") })
        // It speaks of Linux programs, not of Apple devices and bundles.
        for word in ["phone", "Settings.bundle", "watchOS", "iOS"] {
            #expect(!run.output.contains(word), "the tour mentions \(word)")
        }
        // Its work directory was private and temporary: made under TMPDIR, gone afterwards; the user's
        // preferences directory was never touched.
        #expect(run.output.contains(sandbox.temporary.path + "/rvs-harness-"))
        #expect(sandbox.temporary.contents().isEmpty)
        #expect(sandbox.fallback.contents().isEmpty)
    }

    @Test("The tour with --directory keeps its files there, readable through FileDomainStorage")
    func tourWithDirectoryKeepsFiles() throws {
        let run = try sandbox.run(["--directory", sandbox.path])
        #expect(run.status == 0, "standard error: \(run.errors)")
        let application = try sandbox.domain("com.example.harness")
        #expect(application["Bindings"] == .dictionary(["volume": .real(0.7)]))
        #expect(application["userName"] == .string("Ada"))
        #expect(application["launchCount"] == .integer(42))
        #expect(application["AppSettings"] == nil)
        #expect(try sandbox.domain(".GlobalPreferences")["AppleLanguages"] == .array([.string("en"), .string("fr")]))
        let conversation = try #require(try sandbox.domain("group.com.example.harness", in: "GroupContainer")["Conversation"]?.dictionaryValue)
        #expect(conversation["helperAnswered"] != nil)
        #expect(conversation["helperAnswered"] == conversation["appTurn"])
        #expect(sandbox.fallback.contents().isEmpty)
        #expect(sandbox.temporary.contents().isEmpty)
    }
}
