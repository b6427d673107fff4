//! A throwaway CA and server certificate, for the TLS tests.

use std::path::Path;

/// Paths of the files [`write_test_pki`] wrote.
pub struct TestPki {
    pub ca: String,
    pub cert: String,
    pub key: String,
}

/// Writes `ca.pem` (a fresh CA), and `server.pem` / `server-key.pem` (a
/// certificate it issued for 127.0.0.1 and localhost) into `dir`.
pub fn write_test_pki(dir: &Path) -> TestPki {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "ksweep test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key")).expect("CA certificate");
    let key = KeyPair::generate().expect("server key");
    let params = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).expect("params");
    let cert = params.signed_by(&key, &ca).expect("server certificate");
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write PEM");
        path.display().to_string()
    };
    TestPki {
        ca: write("ca.pem", ca.pem()),
        cert: write("server.pem", cert.pem()),
        key: write("server-key.pem", key.serialize_pem()),
    }
}
