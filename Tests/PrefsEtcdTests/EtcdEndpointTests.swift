import Foundation
@testable import PrefsEtcd
import RVS_PersistentPrefs
import Testing

/// Endpoints refused before anything is sent: no cluster needed.
@Suite("EtcdDomainStorage's endpoints")
struct EtcdEndpointTests {
    /// The reason the domain refuses `text` as its endpoint.
    func refusal(_ text: String) -> String {
        do {
            _ = try EtcdDomainStorage(endpoints: [URL(string: text)!], name: "app")
            return "accepted"
        } catch {
            guard case .userDefaultsUnavailable(let reason) = error else { return "\(error)" }
            return reason
        }
    }

    @Test("An endpoint that is not an http or https URL is refused naming it as given, with any user and password hidden")
    func refusedEndpointIsNamed() {
        #expect(refusal("notaurl").contains("the etcd endpoint 'notaurl' is not an http or https URL"), "\(refusal("notaurl"))")
        let withCredentials = refusal("http://root:s3cret@127.0.0.1:2379")
        #expect(withCredentials.contains("the etcd endpoint 'http://127.0.0.1:2379' (its user and password not shown) is not an http") && !withCredentials.contains("s3cret")
                && !withCredentials.contains("root"),
                "\(withCredentials)")
        #expect(refusal("ftp://127.0.0.1:2379").contains("'ftp://127.0.0.1:2379'"))
    }
}
