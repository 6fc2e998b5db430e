// A demo's check of the library's last error, with the remedy a person at a shell needs.

import PrefsTool
import RVS_PersistentPrefs

extension RVS_PersistentPrefs {
    /// Stops a demo when the library reported an error for the last operation, as it does in
    /// `lastError` rather than by throwing.
    ///
    /// A collection that is not a dictionary may come from another domain than the app's (the global
    /// domain, most often, written with `defaults write -g`): the message then names that domain and
    /// its file, and how to remove the value, instead of leaving the app to be blamed.
    func throwIfFailed() throws(HarnessError) {
        guard let error = lastError else { return }
        if case .invalidStoredValue(let key) = error, let suite = userDefaults,
           let found = try? suite.find(key), found.domain != .persistent,
           let source = suite.sources.first(where: { $0.role == found.domain }) {
            let remedy = found.domain == .global ? "harness defaults delete -g \(key)" : "harness defaults delete DOMAIN \(key) in that domain"
            throw .failure("\(error.description): the \(found.domain) domain (\(source.storage.location)) supplies it, not this app's domain; remove it with `\(remedy)`")
        }
        throw HarnessError(error)
    }
}
