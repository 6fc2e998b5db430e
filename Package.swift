// swift-tools-version:6.2
import PackageDescription

// Three layers, each a target, each depending only on the one below it:
//
//   PrefsPropertyList    the property-list codec: PropertyListValue, bplist00, XML and OpenStep text
//   PrefsStorage         defaults domains: files, locking, the search list, locations, errors
//   RVS_PersistentPrefs  the base class and observation; re-exports what users of storage need
//
// PrefsEtcd (domains in an etcd cluster) and PrefsStorageTesting (the conformance kit for backends, SPEC §10) are
// products beside the library, over the storage layer. ARCHITECTURE.md maps the code.
//
// prefsctl, the administrator's tool, is an executable over the PrefsTool target (which `harness defaults`
// also runs); the harness and the benchmark are executables over the library; tests are split the same way, with
// a shared TestSupport target and a TestWorker child process for the multi-process tests.

// Debug builds (what `swift test` runs) link the Swift runtime and Foundation statically into the programs the
// tests start most (TestWorker, EtcdTestWorker, prefsctl), as the Debian package's prefsctl is linked: a test run
// starts hundreds of them, and each start with Foundation linked dynamically cost about 5 ms more CPU time (binding
// its symbols). Not the harness: the benchmark's peer, `UserDefaults.set` of a dictionary, stops with SIGILL in
// CoreFoundation (`__CFTypeCollectionRetain`) when Foundation is linked statically (Swift 6.3.1; a three-line program
// shows it). lld, because it takes the static archives in any order and ignores the toolchain's own link-time warning
// about `mktemp` in Foundation. Release builds (a user's `swift build -c release`) stay as SwiftPM links them.
// Executables only: no product a user's package links against carries the flags.
let staticRuntimeInTests: [LinkerSetting] = [.unsafeFlags(
    ["-static-stdlib", "-use-ld=lld"]
        + ["Foundation", "CoreFoundation", "_FoundationICU", "FoundationEssentials", "_FoundationCShims", "_FoundationCollections",
           "FoundationInternationalization"].flatMap { ["-Xlinker", "-l" + $0] },
    .when(configuration: .debug)
)]

// Debug builds optimize the libraries' code, and the programs and support the tests use (-O; DEBUG, `@testable` and
// the fault injection stay): the test suite is CPU-bound on two cores, and unoptimized generic code in the tests and in
// the hundreds of programs they start took about half of its CPU time. The tests so run the code as users ship it, which found messages that -O drops. A user's
// own debug build gets the libraries optimized too; SwiftPM 6.2 allows such flags in a dependency whose manifest is
// 6.2 or later, as this one is (checked with a tagged `from:` dependency).
//
// Not under ThreadSanitizer (CI sets RVS_PREFS_UNOPTIMIZED for its sanitized builds): specialized collection code
// inlined into the library hands copy-on-write buffers between threads through the runtime's reference counts, which
// the sanitizer does not see, and a correct program (a dictionary copied under a lock and read outside it) is
// reported as a race at -O and not at -Onone.
let optimizedInTests: [SwiftSetting] = Context.environment["RVS_PREFS_UNOPTIMIZED"] == nil
    ? [.unsafeFlags(["-O"], .when(configuration: .debug))] : []

let package = Package(
    name: "RVS_PersistentPrefs",
    products: [
        .library(name: "RVS_PersistentPrefs", targets: ["RVS_PersistentPrefs"]),
        // Domains kept in an etcd cluster (SPEC §8): a separate product, so that an app that does not import
        // it links no networking code and no OpenSSL.
        .library(name: "PrefsEtcd", targets: ["PrefsEtcd"]),
        // The conformance kit a backend author runs from their own tests (SPEC §10): framework-neutral, so that
        // it links no test framework and serves XCTest and Swift Testing alike.
        .library(name: "PrefsStorageTesting", targets: ["PrefsStorageTesting"]),
        .executable(name: "harness", targets: ["harness"]),
        // The administrator's tool (SPEC §13), packaged for Debian by Scripts/package-deb.sh: no test support.
        .executable(name: "prefsctl", targets: ["prefsctl"]),
    ],
    targets: [
        .target(name: "PrefsPropertyList", path: "Sources/PrefsPropertyList", swiftSettings: optimizedInTests),
        // The few Linux calls the Glibc module does not import well (statfs, eventfd, futex, a thread-local).
        .target(name: "CPrefsLinux", path: "Sources/CPrefsLinux"),
        .target(name: "PrefsStorage", dependencies: ["PrefsPropertyList", "CPrefsLinux"], path: "Sources/PrefsStorage", swiftSettings: optimizedInTests),
        .target(
            name: "RVS_PersistentPrefs",
            dependencies: ["PrefsStorage", "PrefsPropertyList", "CPrefsLinux"],
            path: "Sources/RVS_PersistentPrefs",
            swiftSettings: optimizedInTests
        ),
        // DomainStorageConformance: the storage layer only (and its codec, in which DomainStorage is written).
        .target(
            name: "PrefsStorageTesting",
            dependencies: ["PrefsStorage", "PrefsPropertyList"],
            path: "Sources/PrefsStorageTesting"
        ),
        // The system's OpenSSL, for the https endpoints of PrefsEtcd only.
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "PrefsEtcd",
            dependencies: ["PrefsStorage", "PrefsPropertyList", "COpenSSL"],
            path: "Sources/PrefsEtcd",
            swiftSettings: optimizedInTests
        ),
        // The history of `harness check` and its checker (SPEC §11): pure functions over recorded operations,
        // sharing no code with the library's read path, so that the tests can feed it hand-made histories.
        .target(name: "PrefsHistory", path: "Sources/PrefsHistory", swiftSettings: optimizedInTests),
        // The code of `prefsctl` and of its alias `harness defaults`: the verbs, their help, manual page and
        // completions. It links the library and PrefsEtcd (for --etcd), and no test support.
        .target(name: "PrefsTool", dependencies: ["RVS_PersistentPrefs", "PrefsEtcd"], path: "Sources/PrefsTool", swiftSettings: optimizedInTests),
        .executableTarget(name: "prefsctl", dependencies: ["PrefsTool"], path: "Sources/prefsctl", swiftSettings: optimizedInTests,
                         linkerSettings: staticRuntimeInTests),
        .executableTarget(
            name: "harness",
            // PrefsEtcd and a local etcd cluster for `harness defaults --etcd` and `harness bench --etcd`; the
            // test support's waitable values for the bench's measurements.
            dependencies: ["RVS_PersistentPrefs", "PrefsTool", "PrefsEtcd", "EtcdTestSupport", "TestSupport", "PrefsHistory"],
            path: "Harness",
            exclude: [],
            resources: [.copy("SettingsSchema.plist")],
            swiftSettings: optimizedInTests
        ),
        // A child process for the multi-process tests: it writes, reads and gets killed on command.
        .executableTarget(
            name: "TestWorker",
            dependencies: ["RVS_PersistentPrefs"],
            path: "Tests/TestWorker",
            swiftSettings: optimizedInTests,
            linkerSettings: staticRuntimeInTests
        ),
        // What every test target shares: temporary directories and child processes.
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: optimizedInTests),
        // A real three-member etcd cluster started from the `etcd` binary, for the PrefsEtcd tests.
        .target(name: "EtcdTestSupport", dependencies: ["TestSupport", "PrefsEtcd"], path: "Tests/EtcdTestSupport", swiftSettings: optimizedInTests),
        // A child process for the PrefsEtcd multi-process tests, attached to one member of the cluster.
        .executableTarget(
            name: "EtcdTestWorker",
            dependencies: ["RVS_PersistentPrefs", "PrefsEtcd"],
            path: "Tests/EtcdTestWorker",
            swiftSettings: optimizedInTests,
            linkerSettings: staticRuntimeInTests
        ),
        // The test targets do not list the programs they start (TestWorker, EtcdTestWorker, harness, prefsctl):
        // `swift build --build-tests` and `swift test` build every target anyway, and a test target that listed an
        // executable would link its objects, and its static runtime's flags, into the test bundle.
        .testTarget(
            name: "PrefsPropertyListTests",
            dependencies: ["PrefsPropertyList", "TestSupport"],
            path: "Tests/PrefsPropertyListTests"
        ),
        .testTarget(
            name: "PrefsStorageTests",
            dependencies: ["PrefsStorage", "PrefsStorageTesting", "TestSupport"],
            path: "Tests/PrefsStorageTests"
        ),
        .testTarget(
            name: "RVS_PersistentPrefsTests",
            dependencies: ["RVS_PersistentPrefs", "TestSupport"],
            path: "Tests/RVS_PersistentPrefsTests"
        ),
        .testTarget(
            name: "PrefsEtcdTests",
            dependencies: ["PrefsEtcd", "RVS_PersistentPrefs", "PrefsStorageTesting", "TestSupport", "EtcdTestSupport"],
            path: "Tests/PrefsEtcdTests"
        ),
        .testTarget(
            name: "HarnessTests",
            dependencies: ["RVS_PersistentPrefs", "TestSupport", "PrefsEtcd", "EtcdTestSupport", "PrefsHistory"],
            path: "Tests/HarnessTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
