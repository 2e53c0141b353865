//! A private Pebble: Let's Encrypt's ACME test server
//! (`go install github.com/letsencrypt/pebble/v2/cmd/pebble@v2.10.3`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use crate::{find_program, launch, launch_on_free_port, temp_dir, unavailable, Process};

/// Pebble on free ports on 127.0.0.1, checking TLS-ALPN-01 challenges on
/// `tls_port` and issuing certificates valid for `validity` seconds. Its
/// own HTTPS certificate is made here, by a CA whose root is
/// [`Pebble::api_ca`]. Dropping it stops the server and removes its dir.
pub struct Pebble {
    process: Process,
    port: u16,
    mgmt: u16,
    dir: tempfile::TempDir,
}

impl Pebble {
    /// None (after one line on stderr) when pebble is not installed, unless
    /// COVE_REQUIRE_SERVICES is set, then a panic.
    pub fn start(tls_port: u16, validity: u64) -> Option<Pebble> {
        let Some(bin) = find_pebble() else {
            return unavailable(
                "no pebble (go install github.com/letsencrypt/pebble/v2/cmd/pebble@v2.10.3)",
            );
        };
        let dir = temp_dir("cove-pebble-");
        write_api_certs(dir.path());
        let mut mgmt = 0;
        let (port, child) = launch_on_free_port("Pebble", |port| {
            mgmt = crate::free_port();
            spawn(&bin, dir.path(), port, mgmt, tls_port, validity)
        });
        let pebble = Pebble {
            process: Process::default(),
            port,
            mgmt,
            dir,
        };
        pebble.process.set(child);
        Some(pebble)
    }

    /// The ACME directory URL.
    pub fn directory(&self) -> String {
        format!("https://127.0.0.1:{}/dir", self.port)
    }

    /// The root (PEM file) of Pebble's own HTTPS certificate: what an ACME
    /// client must trust to talk to [`Pebble::directory`].
    pub fn api_ca(&self) -> PathBuf {
        self.dir.path().join("api-ca.pem")
    }

    /// The root (PEM) of the certificates Pebble issues, made anew at each
    /// start, from its management API (read with curl; that API has a
    /// certificate of its own, not checked: it is a local test server).
    pub fn issuing_root(&self) -> String {
        let out = Command::new("curl")
            .args(["-sSk"])
            .arg(format!("https://127.0.0.1:{}/roots/0", self.mgmt))
            .output()
            .expect("curl runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("PEM")
    }
}

impl Drop for Pebble {
    fn drop(&mut self) {
        self.process.stop(libc::SIGTERM, Duration::from_secs(5));
    }
}

/// On PATH, or where `go install` puts it.
fn find_pebble() -> Option<PathBuf> {
    find_program("pebble").or_else(|| {
        let gopath = std::env::var_os("GOPATH")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join("go")))?;
        let bin = gopath.join("bin/pebble");
        crate::is_executable(&bin).then_some(bin)
    })
}

/// A CA, and a certificate it signed for 127.0.0.1 and localhost, for
/// Pebble's own HTTPS.
fn write_api_certs(dir: &Path) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).expect("CA");
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().expect("key");
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("leaf");
    std::fs::write(dir.join("api-ca.pem"), ca_cert.pem()).expect("write");
    std::fs::write(dir.join("api.pem"), leaf.pem()).expect("write");
    std::fs::write(dir.join("api.key"), key.serialize_pem()).expect("write");
}

fn spawn(
    bin: &Path,
    dir: &Path,
    port: u16,
    mgmt: u16,
    tls_port: u16,
    validity: u64,
) -> Result<Child, crate::LaunchError> {
    let config = format!(
        r#"{{"pebble": {{
  "listenAddress": "127.0.0.1:{port}",
  "managementListenAddress": "127.0.0.1:{mgmt}",
  "certificate": "{dir}/api.pem",
  "privateKey": "{dir}/api.key",
  "httpPort": 5002,
  "tlsPort": {tls_port},
  "ocspResponderURL": "",
  "externalAccountBindingRequired": false,
  "profiles": {{"default": {{"description": "test", "validityPeriod": {validity}}}}}
}}}}"#,
        dir = dir.display()
    );
    let path = dir.join("pebble.json");
    std::fs::write(&path, config).expect("write the config");
    let mut cmd = Command::new(bin);
    cmd.arg("-config")
        .arg(&path)
        // Answer at once, and accept every nonce: tests, not a CA drill.
        .env("PEBBLE_VA_NOSLEEP", "1")
        .env("PEBBLE_WFE_NONCEREJECT", "0")
        .env("PEBBLE_AUTHZREUSE", "0")
        .current_dir(dir);
    launch(&mut cmd, &dir.join("pebble.log"), |_, log| {
        log.contains("ACME directory available at") && crate::accepts(port)
    })
}
