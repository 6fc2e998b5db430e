import Testing
@testable import PrefsStorage

/// Paths are taken apart by their bytes: `/` followed by a combining mark is one `Character`, yet still
/// separates two components.
@Suite("Paths taken apart by bytes")
struct PathBytesTests {
    @Test("Components, parents and the component below an ancestor are found across a slash that begins a Character")
    func slashesInsideCharacters() {
        let path = "/tmp/\u{301}d/sub"
        #expect(PathBytes.components(path) == ["tmp", "\u{301}d", "sub"])
        #expect(PathBytes.parent(path) == "/tmp/\u{301}d")
        #expect(PathBytes.parent("/\u{301}d") == "/")
        #expect(PathBytes.parent("/") == "/")
        #expect(PathBytes.component(of: path, below: "/tmp") == "\u{301}d")
        #expect(PathBytes.component(of: path, below: "/") == "tmp")
        #expect(PathBytes.isBelow(path, "/tmp") && PathBytes.isBelow(path, "/"))
        #expect(!PathBytes.isBelow("/tmpx/a", "/tmp") && !PathBytes.isBelow("/tmp", "/tmp"))
        #expect(PathBytes.isAbsolute("/\u{301}d") && !PathBytes.isAbsolute("\u{301}d") && !PathBytes.isAbsolute(""))
    }
}
