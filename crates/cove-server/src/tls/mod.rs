//! HTTPS: rustls (ring provider, as the outbound client uses) on the
//! workers' sockets, offering HTTP/2 and HTTP/1.1 by ALPN.
//!
//! The certificate is read from PEM files and held in [`Certs`], which every
//! handshake asks for the current one: [`Certs::reload`] swaps in a new pair
//! (on SIGHUP, or when serve.rs sees the files change) without touching the
//! connections already open, and keeps the old pair if the new one does not
//! load.

mod acme;
mod load;
pub(crate) mod redirect;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use cove_core::log;

pub use acme::{Acme, AcmeSettings, LETS_ENCRYPT};
pub use load::load;

/// Where HTTPS certificates come from.
#[derive(Debug, Clone)]
pub enum TlsSource {
    /// `--tls-cert` and `--tls-key`.
    Files(Arc<Certs>),
    /// `--acme`.
    Acme(Arc<Acme>),
}

impl TlsSource {
    /// The server side of rustls, offering HTTP/2 and HTTP/1.1 (and, for
    /// ACME, the TLS-ALPN-01 challenge protocol).
    pub(crate) fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let resolver: Arc<dyn ResolvesServerCert> = match self {
            TlsSource::Files(certs) => certs.clone(),
            TlsSource::Acme(acme) => acme.resolver(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("the ring provider supports the default TLS versions")
            .with_no_client_auth()
            .with_cert_resolver(resolver);
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        if let TlsSource::Acme(_) = self {
            config.alpn_protocols.push(ACME_TLS_ALPN.to_vec());
        }
        Arc::new(config)
    }

    /// SIGHUP: read certificate files again (ACME renews on its own).
    pub(crate) fn reload(&self) {
        if let TlsSource::Files(certs) = self {
            certs.reload();
        }
    }

    /// Read certificate files again if they changed.
    pub(crate) fn reload_if_changed(&self) {
        if let TlsSource::Files(certs) = self {
            certs.reload_if_changed();
        }
    }
}

/// The protocol a CA's TLS-ALPN-01 check asks for (RFC 8737).
pub(crate) const ACME_TLS_ALPN: &[u8] = rustls_acme::acme::ACME_TLS_ALPN_NAME;

/// Where the certificate chain and its private key are, both PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The certificate every handshake gets, replaceable while serving.
#[derive(Debug)]
pub struct Certs {
    files: TlsFiles,
    current: RwLock<Arc<CertifiedKey>>,
    /// The files' modification times when last read.
    stamp: Mutex<Option<(SystemTime, SystemTime)>>,
}

impl Certs {
    /// Read the pair; the error names the file and what is wrong with it.
    pub fn open(files: TlsFiles) -> Result<Certs, String> {
        let stamp = stamp(&files);
        let key = load(&files)?;
        Ok(Certs {
            files,
            current: RwLock::new(Arc::new(key)),
            stamp: Mutex::new(stamp),
        })
    }

    /// Read the files again and use them for new handshakes; on failure keep
    /// serving the old certificate and say why.
    pub fn reload(&self) {
        let stamp = stamp(&self.files);
        match load(&self.files) {
            Ok(key) => {
                *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(key);
                *self.stamp.lock().unwrap_or_else(|e| e.into_inner()) = stamp;
                log::info(&format!(
                    "TLS certificate reloaded from {}",
                    self.files.cert.display()
                ));
            }
            Err(e) => log::error(&format!(
                "TLS certificate not reloaded, still serving the previous one: {e}"
            )),
        }
    }

    /// [`Certs::reload`] if either file changed since it was last read.
    pub fn reload_if_changed(&self) {
        let now = stamp(&self.files);
        let changed = *self.stamp.lock().unwrap_or_else(|e| e.into_inner()) != now;
        if changed && now.is_some() {
            self.reload();
        }
    }
}

impl ResolvesServerCert for Certs {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}

fn stamp(files: &TlsFiles) -> Option<(SystemTime, SystemTime)> {
    let mtime = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    Some((mtime(&files.cert)?, mtime(&files.key)?))
}
