import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

/// Subclasses whose names the default storage key must take, nested at several depths.
enum BaseClassNamespace {
    final class NestedPrefs: BaseClassTestPrefs {}

    enum Inner {
        class DeeplyNestedPrefs: BaseClassTestPrefs {}
    }
}

/// A subclass of a subclass: the key is the name of the type actually created.
final class BaseClassGrandchildPrefs: BaseClassNamespace.Inner.DeeplyNestedPrefs {}

@Suite("The storage key: the subclass's unqualified type name by default, and a redirect when changed")
struct BaseClassStorageKeyTests {
    @Test("init() stores under the subclass's unqualified type name")
    func initWithoutArgumentsUsesTheTypeName() throws {
        let fixture = try BaseClassFixture()
        let prefs = BaseClassTestPrefs(suite: fixture.suite)
        #expect(prefs.key == "BaseClassTestPrefs")
        prefs.appearance = "dark"
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored() == ["BaseClassTestPrefs": .dictionary(["appearance": .string("dark")])])
    }

    @Test("init(key: nil) stores under the subclass's unqualified type name, and merges there")
    func initWithNilKeyUsesTheTypeName() throws {
        let fixture = try BaseClassFixture()
        try fixture.seed(["BaseClassTestPrefs": .dictionary(["launchCount": .integer(4)])])
        let prefs = BaseClassTestPrefs(suite: fixture.suite, key: nil, values: ["appearance": "dark"])
        #expect(prefs.key == "BaseClassTestPrefs")
        #expect(prefs.baseClassOutcome == .success)
        #expect(try fixture.stored() == [
            "BaseClassTestPrefs": .dictionary(["launchCount": .integer(4), "appearance": .string("dark")]),
        ])
    }

    @Test("A nested subclass's default storage key is its own name, without the names of the enclosing types or module")
    func nestedTypeUsesItsUnqualifiedName() throws {
        let fixture = try BaseClassFixture()
        let nested = BaseClassNamespace.NestedPrefs(suite: fixture.suite)
        let deeper = BaseClassNamespace.Inner.DeeplyNestedPrefs(suite: fixture.suite, key: nil, values: nil)
        #expect(nested.key == "NestedPrefs")
        #expect(deeper.key == "DeeplyNestedPrefs")
        nested.appearance = "nested"
        deeper.appearance = "deeper"
        #expect(try fixture.stored() == [
            "NestedPrefs": .dictionary(["appearance": .string("nested")]),
            "DeeplyNestedPrefs": .dictionary(["appearance": .string("deeper")]),
        ])
    }

    @Test("A subclass of a subclass gets the name of the type actually created")
    func subclassOfSubclassUsesItsOwnName() throws {
        let fixture = try BaseClassFixture()
        #expect(BaseClassGrandchildPrefs(suite: fixture.suite).key == "BaseClassGrandchildPrefs")
        #expect(BaseClassGrandchildPrefs(suite: fixture.suite, key: nil, values: [:]).key == "BaseClassGrandchildPrefs")
    }

    @Test("An explicit key is used as given")
    func explicitKeyIsUsed() throws {
        let fixture = try BaseClassFixture()
        let prefs = BaseClassTestPrefs(suite: fixture.suite, key: "com.example.app.preferences", values: ["appearance": "dark"])
        #expect(prefs.key == "com.example.app.preferences")
        #expect(try fixture.stored().keys.sorted() == ["com.example.app.preferences"])
    }

    @Test("Changing key redirects later reads and writes, and migrates nothing")
    func changingKeyRedirects() throws {
        let fixture = try BaseClassFixture()
        let prefs = fixture.prefs(key: "first", values: ["appearance": "dark", "launchCount": 1])
        prefs.key = "second"
        #expect(prefs.key == "second")
        #expect(prefs.values.isEmpty, "the new key must not show the old collection")
        #expect(prefs.baseClassOutcome == .success)
        prefs["appearance"] = "light"
        #expect(try fixture.stored() == [
            "first": .dictionary(["appearance": .string("dark"), "launchCount": .integer(1)]),
            "second": .dictionary(["appearance": .string("light")]),
        ])
        prefs.clear()
        #expect(try fixture.stored() == ["first": .dictionary(["appearance": .string("dark"), "launchCount": .integer(1)])])
        prefs.key = "first"
        #expect(prefs.appearance == "dark" && prefs.launchCount == 1)
    }
}
