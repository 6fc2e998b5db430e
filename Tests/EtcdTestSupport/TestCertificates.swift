import Foundation
import TestSupport

/// A certificate authority and server certificates made with the `openssl` command for the TLS tests. Keys are
/// P-256: a 2048-bit RSA key took the machine's CPU for a noticeable share of a test run, and TLS treats both alike.
package enum TestCertificates {
    /// Makes, in `directory`, a CA (`ca.pem`) and a server certificate and key signed by it (`NAME.pem`,
    /// `NAME-key.pem`) whose subject alternative names are `subjectAltName` (for example `IP:127.0.0.1`).
    package static func make(in directory: String, name: String, subjectAltName: String) throws -> EtcdCluster.TLSFiles {
        let ca = directory + "/ca.pem", caKey = directory + "/ca-key.pem"
        if !FileManager.default.fileExists(atPath: ca) {
            try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", caKey, "-out", ca, "-days", "2",
                         "-subj", "/CN=RVS_PersistentPrefs test CA"])
        }
        let key = "\(directory)/\(name)-key.pem", request = "\(directory)/\(name).csr", certificate = "\(directory)/\(name).pem"
        let extensions = "\(directory)/\(name).ext"
        try Data("subjectAltName=\(subjectAltName)\n".utf8).write(to: URL(fileURLWithPath: extensions))
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", request, "-subj", "/CN=\(name)"])
        try openssl(["x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", certificate,
                     "-days", "2", "-extfile", extensions])
        return EtcdCluster.TLSFiles(certificate: certificate, key: key, authority: ca)
    }

    private static func openssl(_ arguments: [String]) throws {
        let child = try ChildProcess("/usr/bin/env", ["openssl"] + arguments)
        child.closeInput()
        _ = child.readAllOutput()
        let errors = child.readErrors()
        guard child.wait() == 0 else { throw EtcdClusterError.notReady("openssl", errors) }
    }
}
