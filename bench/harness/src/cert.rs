//! The run's certificate for the `tls` and `h2` tables: one self-signed
//! ECDSA P-256 certificate for `localhost` and 127.0.0.1, made by the
//! openssl command in the run's scratch directory (removed with it) and
//! passed to every TLS server.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// PEM files: the certificate and its PKCS#8 private key.
#[derive(Debug, Clone)]
pub struct CertPair {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// `openssl req` arguments that write a self-signed certificate and key
/// valid for two days.
pub fn openssl_args(pair: &CertPair) -> Vec<OsString> {
    let mut a: Vec<OsString> = [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
        "-keyout",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    a.push(pair.key.clone().into());
    a.push("-out".into());
    a.push(pair.cert.clone().into());
    a
}

/// Make the pair in `dir` (`cert.pem`, `key.pem`).
pub fn make(dir: &Path) -> Result<CertPair> {
    let pair = CertPair {
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    };
    let out = Command::new("openssl")
        .args(openssl_args(&pair))
        .stdin(Stdio::null())
        .output()
        .context("cannot run openssl (apt-get install openssl)")?;
    if !out.status.success() || !pair.cert.is_file() || !pair.key.is_file() {
        bail!(
            "openssl req failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(pair)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_name_both_files() {
        let pair = CertPair {
            cert: "/d/cert.pem".into(),
            key: "/d/key.pem".into(),
        };
        let a = openssl_args(&pair);
        let at = |s: &str| a.iter().position(|x| x == s).unwrap();
        assert_eq!(a[at("-keyout") + 1], "/d/key.pem");
        assert_eq!(a[at("-out") + 1], "/d/cert.pem");
        assert_eq!(a[at("-subj") + 1], "/CN=localhost");
        assert!(a.contains(&"-nodes".into()), "the key is not encrypted");
    }

    #[test]
    fn makes_a_pem_pair_when_openssl_is_installed() {
        if Command::new("openssl").arg("version").output().is_err() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("cove-bench-cert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pair = make(&dir).unwrap();
        let cert = std::fs::read_to_string(&pair.cert).unwrap();
        let key = std::fs::read_to_string(&pair.key).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"), "{cert}");
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"), "{key}");
    }
}
