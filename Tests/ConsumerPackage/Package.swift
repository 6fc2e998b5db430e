// swift-tools-version:6.0
// A package that uses RVS_PersistentPrefs the way an application does. `.ci/run` builds it with warnings
// as errors and runs it, so that the Quick start of SPEC §1 (kept verbatim in QuickStart/main.swift) and the
// typed entries of SPEC §6 (issue 13's example, verbatim in TypedEntries/main.swift) keep compiling
// warning-free in a user's Swift 6 package and keep behaving as written; Swift5Mode does the same in the
// Swift 5 language mode, and PublicSurface uses every public declaration of the RVS_PersistentPrefs product,
// checking each as it runs.
import PackageDescription

let package = Package(
    name: "ConsumerPackage",
    dependencies: [.package(name: "RVS_PersistentPrefs", path: "../..")],
    targets: [
        .executableTarget(
            name: "QuickStart",
            dependencies: [.product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs")]
        ),
        // Issue 13's example of typed entries (SPEC §6), verbatim, then checks of what it promises.
        .executableTarget(
            name: "TypedEntries",
            dependencies: [.product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs")]
        ),
        // Every public declaration of the RVS_PersistentPrefs product, named and used from outside the package,
        // each checked as it runs.
        .executableTarget(
            name: "PublicSurface",
            dependencies: [.product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs")]
        ),
        // A backend of the app's own (a DomainStorage that can watch), and two instances over it hearing
        // each other; the same over one InMemoryDomainStorage (SPEC §7.1). It also passes the conformance kit
        // of the PrefsStorageTesting product (SPEC §10), as a backend author's own tests would run it.
        .executableTarget(
            name: "CustomBackend",
            dependencies: [
                .product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs"),
                .product(name: "PrefsStorageTesting", package: "RVS_PersistentPrefs"),
            ]
        ),
        // Settings shared through an etcd cluster with the second product, PrefsEtcd (SPEC §8); .ci/run runs it
        // against a one-member loopback cluster.
        .executableTarget(
            name: "EtcdFleet",
            dependencies: [
                .product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs"),
                .product(name: "PrefsEtcd", package: "RVS_PersistentPrefs"),
            ]
        ),
        // Handlers on their actor (SPEC §12): the articles' examples with main-actor and actor handlers while
        // another process writes 200 times; the same file in both language modes.
        .executableTarget(
            name: "MainActorHandlers",
            dependencies: [.product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs")]
        ),
        .executableTarget(
            name: "MainActorHandlersSwift5",
            dependencies: [.product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // A program whose main thread runs its own poll() loop, not Dispatch's (a GTK program runs GLib's): the
        // Observation article's way of receiving changes made elsewhere on such a loop (SPEC §12).
        .executableTarget(
            name: "ForeignLoop",
            dependencies: [.product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs")]
        ),
        // Watching turned on and off from several threads while another instance writes: CI runs it under
        // ThreadSanitizer.
        .executableTarget(
            name: "WatchToggling",
            dependencies: [.product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs")]
        ),
        // The same API from an app still in the Swift 5 language mode.
        .executableTarget(
            name: "Swift5Mode",
            dependencies: [.product(name: "RVS_PersistentPrefs", package: "RVS_PersistentPrefs")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
