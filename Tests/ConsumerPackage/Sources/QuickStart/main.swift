import RVS_PersistentPrefs

final class AppPreferences: RVS_PersistentPrefs {
    override var keys: [String] { ["launchCount", "appearance"] }
    var launchCount: Int {
        get { self["launchCount"] as? Int ?? 0 }
        set { self["launchCount"] = newValue }
    }
    var appearance: String {
        get { self["appearance"] as? String ?? "system" }
        set { self["appearance"] = newValue }
    }
}

let prefs = AppPreferences(key: "com.example.app.preferences")
let token = prefs.observe(\.appearance, options: [.old, .new]) { _, change in
    print("appearance:", change.oldValue ?? "-", "→", change.newValue ?? "-")
}
if let error = prefs.lastError { print(error) } else { prefs.appearance = "dark" }

// ---- End of the Quick start. What follows checks that it behaves as written. ----

var notifications = 0
let counter = prefs.observe(\.launchCount, options: [.old, .new]) { _, change in
    notifications += 1
    precondition(change.newValue == (change.oldValue ?? -1) + 1, "launchCount observer saw \(change)")
}
precondition(prefs.lastError == nil, "unexpected error: \(String(describing: prefs.lastError))")
precondition(prefs.appearance == "dark", "appearance should read back as dark")
let before = prefs.launchCount
prefs.launchCount += 1
precondition(prefs.launchCount == before + 1 && notifications == 1, "launchCount did not advance once")
prefs["undeclared"] = 1
if case .incorrectKeys(let names)? = prefs.lastError, names == ["undeclared"] {} else {
    preconditionFailure("an undeclared entry name was not rejected")
}
precondition(notifications == 1, "a rejected write notified")
let reloaded = AppPreferences(key: "com.example.app.preferences")
precondition(reloaded.appearance == "dark" && reloaded.launchCount == before + 1, "a new instance did not read the stored values")
withExtendedLifetime((token, counter)) {}
print("QuickStart: behaves as written")
