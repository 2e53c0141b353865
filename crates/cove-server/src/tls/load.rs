//! A certificate chain and its private key from PEM files.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;

use super::TlsFiles;

/// The pair in `files`, checked to belong together. Errors name the file and
/// what to do.
pub fn load(files: &TlsFiles) -> Result<CertifiedKey, String> {
    let cert_name = files.cert.display();
    let key_name = files.key.display();
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .map_err(|e| format!("--tls-cert {cert_name}: {e}"))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--tls-cert {cert_name}: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "--tls-cert {cert_name}: no certificate in it (expected PEM \"BEGIN CERTIFICATE\" blocks, \
             the server's certificate first)"
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| {
        format!(
            "--tls-key {key_name}: {e} (expected a PEM private key: \"BEGIN PRIVATE KEY\", \
             \"BEGIN RSA PRIVATE KEY\" or \"BEGIN EC PRIVATE KEY\")"
        )
    })?;
    let signer = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|e| format!("--tls-key {key_name}: {e}"))?;
    let pair = CertifiedKey::new(certs, signer);
    match pair.keys_match() {
        Ok(()) => Ok(pair),
        // Some key types cannot tell (no public key to compare): accept.
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => Ok(pair),
        Err(e) => Err(format!(
            "--tls-key {key_name} does not belong to the certificate in {cert_name}: {e}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_pair(dir: &std::path::Path, name: &str) -> TlsFiles {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let files = TlsFiles {
            cert: dir.join(format!("{name}.crt")),
            key: dir.join(format!("{name}.key")),
        };
        std::fs::write(&files.cert, cert.cert.pem()).unwrap();
        std::fs::write(&files.key, cert.signing_key.serialize_pem()).unwrap();
        files
    }

    #[test]
    fn a_matching_pair_loads() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_pair(dir.path(), "a");
        assert_eq!(load(&files).unwrap().cert.len(), 1);
    }

    #[test]
    fn errors_name_the_file_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_pair(dir.path(), "a");
        let b = write_pair(dir.path(), "b");
        let mixed = TlsFiles {
            cert: a.cert.clone(),
            key: b.key.clone(),
        };
        let err = load(&mixed).unwrap_err();
        assert!(err.contains("does not belong to the certificate"), "{err}");
        let swapped = TlsFiles {
            cert: a.key.clone(),
            key: a.cert.clone(),
        };
        let err = load(&swapped).unwrap_err();
        assert!(
            err.contains("--tls-cert") && err.contains("no certificate"),
            "{err}"
        );
        let missing = TlsFiles {
            cert: dir.path().join("none.crt"),
            key: a.key.clone(),
        };
        let err = load(&missing).unwrap_err();
        assert!(err.contains("none.crt"), "{err}");
    }
}
