//! `--acme DOMAIN`: certificates from an ACME CA (Let's Encrypt by
//! default), obtained at start and renewed when two thirds of their
//! lifetime has passed, with rustls-acme. The CA checks the domain with
//! TLS-ALPN-01: it connects to this server's HTTPS port asking for the
//! `acme-tls/1` protocol, and the handshake answers the challenge (conn.rs
//! closes such connections once the handshake is done).
//!
//! The account key and the certificate are cached in a directory (mode
//! 0700: the certificate file holds its private key), so a restart serves
//! the cached certificate at once and does not order a new one.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use rustls::server::ResolvesServerCert;
use rustls_acme::caches::DirCache;
use rustls_acme::{AcmeConfig, AcmeState, EventOk};

use cove_core::log;

/// The default directory: Let's Encrypt's production CA.
pub const LETS_ENCRYPT: &str = rustls_acme::acme::LETS_ENCRYPT_PRODUCTION_DIRECTORY;

/// What `--acme` and its companion flags say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcmeSettings {
    pub domains: Vec<String>,
    /// The account's contact address, if given.
    pub email: Option<String>,
    /// The CA's directory URL.
    pub directory: String,
    /// Where the account key and the certificate are kept.
    pub cache: PathBuf,
    /// A root certificate (PEM) to trust for the directory's own HTTPS,
    /// besides Mozilla's: a private or test CA (Pebble).
    pub directory_ca: Option<PathBuf>,
}

/// Certificates kept current by ACME.
pub struct Acme {
    domains: String,
    resolver: Arc<dyn ResolvesServerCert>,
    /// Taken by [`Acme::run`].
    state: Mutex<Option<AcmeState<std::io::Error>>>,
}

impl std::fmt::Debug for Acme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Acme")
            .field("domains", &self.domains)
            .finish()
    }
}

impl Acme {
    /// Check the settings and prepare the cache; nothing is ordered until
    /// [`Acme::run`].
    pub fn new(settings: &AcmeSettings) -> Result<Acme, String> {
        if settings.domains.is_empty() || settings.domains.iter().any(|d| !is_domain(d)) {
            return Err(format!(
                "--acme {}: give the domain names to certify, comma-separated (example.com,www.example.com)",
                settings.domains.join(",")
            ));
        }
        if !settings.directory.starts_with("https://") {
            return Err(format!(
                "--acme-dir {}: an ACME directory is an https:// URL",
                settings.directory
            ));
        }
        private_dir(&settings.cache)
            .map_err(|e| format!("--acme-cache {}: {e}", settings.cache.display()))?;
        let mut config = match &settings.directory_ca {
            Some(ca) => AcmeConfig::new_with_client_config(&settings.domains, client_trusting(ca)?),
            None => AcmeConfig::new(&settings.domains),
        }
        .directory(&settings.directory)
        .cache(DirCache::new(settings.cache.clone()));
        if let Some(email) = &settings.email {
            config = config.contact_push(format!("mailto:{email}"));
        }
        let state = config.state();
        Ok(Acme {
            domains: settings.domains.join(", "),
            resolver: state.resolver(),
            state: Mutex::new(Some(state)),
        })
    }

    pub(crate) fn resolver(&self) -> Arc<dyn ResolvesServerCert> {
        self.resolver.clone()
    }

    /// Order, renew and cache certificates for as long as the server runs,
    /// saying what happens in the log. Runs once; later calls return at once.
    pub(crate) async fn run(self: Arc<Self>) {
        let Some(mut state) = self.state.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        while let Some(event) = state.next().await {
            match event {
                Ok(EventOk::DeployedNewCert) => {
                    log::info(&format!("ACME: certificate obtained for {}", self.domains))
                }
                Ok(EventOk::DeployedCachedCert) => log::info(&format!(
                    "ACME: serving the cached certificate for {}",
                    self.domains
                )),
                Ok(EventOk::CertCacheStore | EventOk::AccountCacheStore) => {}
                // rustls-acme retries with a growing delay.
                Err(e) => log::warn(&format!("ACME: {} (for {}; retrying)", e, self.domains)),
            }
        }
    }
}

/// A plain DNS name (no scheme, port, path or wildcard).
fn is_domain(d: &str) -> bool {
    !d.is_empty()
        && d.len() <= 253
        && d.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// Create `dir` if needed, readable by this user only.
fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// A TLS client for the directory trusting Mozilla's roots and `ca`.
fn client_trusting(ca: &std::path::Path) -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let certs = CertificateDer::pem_file_iter(ca)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("--acme-ca {}: {e}", ca.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "--acme-ca {}: no PEM certificate in it",
            ca.display()
        ));
    }
    for cert in certs {
        roots
            .add(cert)
            .map_err(|e| format!("--acme-ca {}: {e}", ca.display()))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(domains: &[&str], dir: &std::path::Path) -> AcmeSettings {
        AcmeSettings {
            domains: domains.iter().map(|d| d.to_string()).collect(),
            email: None,
            directory: LETS_ENCRYPT.to_string(),
            cache: dir.join("acme"),
            directory_ca: None,
        }
    }

    #[test]
    fn domains_and_directory_are_checked_and_the_cache_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let err = Acme::new(&settings(&["https://example.com"], dir.path())).unwrap_err();
        assert!(err.contains("comma-separated"), "{err}");
        let mut s = settings(&["example.com"], dir.path());
        s.directory = "http://ca.test/dir".into();
        assert!(Acme::new(&s).unwrap_err().contains("https:// URL"));
        Acme::new(&settings(&["example.com", "www.example.com"], dir.path())).unwrap();
        let mode = std::fs::metadata(dir.path().join("acme"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
