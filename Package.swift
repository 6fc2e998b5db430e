// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "RVS_PersistentPrefs",
    products: [
        .library(name: "RVS_PersistentPrefs", targets: ["RVS_PersistentPrefs"]),
        .executable(name: "harness", targets: ["harness"]),
    ],
    targets: [
        .target(
            name: "RVS_PersistentPrefs",
            path: "Sources/RVS_PersistentPrefs"
        ),
        .executableTarget(
            name: "harness",
            dependencies: ["RVS_PersistentPrefs"],
            path: "Harness",
            exclude: [],
            resources: [.copy("SettingsSchema.plist")]
        ),
        // A child process for the multi-process tests: it writes, reads and gets killed on command.
        .executableTarget(
            name: "TestWorker",
            dependencies: ["RVS_PersistentPrefs"],
            path: "Tests/TestWorker"
        ),
        .testTarget(
            name: "RVS_PersistentPrefsTests",
            dependencies: ["RVS_PersistentPrefs", "TestWorker", "harness"],
            path: "Tests/RVS_PersistentPrefsTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
