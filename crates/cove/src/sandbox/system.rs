//! System files the outbound clients read after the sandbox is applied:
//! the CA roots (the TLS setup is built on the first request) and the
//! resolver's configuration (each lookup may read it again).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::policy::existing;

/// Where rustls-native-certs (through openssl-probe) looks on Linux when
/// SSL_CERT_FILE and SSL_CERT_DIR are unset.
const CA_FILES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/ssl/cert.pem",
    "/opt/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/certs/cacert.pem",
];
const CA_DIRS: &[&str] = &[
    "/etc/ssl/certs",
    "/etc/pki/tls/certs",
    "/etc/security/certificates",
];

/// glibc's resolver and name-service configuration.
const RESOLVER_FILES: &[&str] = &[
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    // dlopen finds the name-service modules through it.
    "/etc/ld.so.cache",
];
const LIB_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// The CA bundle files and directories the TLS client may read.
pub(crate) fn ca_roots() -> Vec<PathBuf> {
    ca_roots_from(
        std::env::var_os("SSL_CERT_FILE"),
        std::env::var_os("SSL_CERT_DIR"),
        CA_FILES,
        CA_DIRS,
    )
}

/// A certificate directory holds symlinks (`openssl rehash`) into other
/// directories, and the kernel checks the file a link leads to: those
/// directories are readable too.
fn ca_roots_from(
    env_file: Option<OsString>,
    env_dirs: Option<OsString>,
    files: &[&str],
    dirs: &[&str],
) -> Vec<PathBuf> {
    let mut out: BTreeSet<PathBuf> = BTreeSet::new();
    let mut candidates: Vec<PathBuf> = files.iter().chain(dirs).map(PathBuf::from).collect();
    candidates.extend(env_file.map(PathBuf::from));
    if let Some(d) = env_dirs {
        candidates.extend(std::env::split_paths(&d));
    }
    for path in candidates {
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if real.is_dir() {
            for entry in std::fs::read_dir(&real).into_iter().flatten().flatten() {
                if let Some(parent) = entry
                    .path()
                    .canonicalize()
                    .ok()
                    .as_deref()
                    .and_then(Path::parent)
                {
                    out.insert(parent.to_path_buf());
                }
            }
        }
        out.insert(real);
    }
    out.into_iter().collect()
}

/// The resolver's files, and the name-service modules nsswitch.conf names
/// for `hosts` beyond the two built into glibc (`files`, `dns`).
pub(crate) fn resolver_files() -> Vec<PathBuf> {
    let files: Vec<&Path> = RESOLVER_FILES.iter().map(Path::new).collect();
    let mut out = existing(&files);
    // resolv.conf kept elsewhere (systemd-resolved, resolvconf) is replaced
    // by renaming a new file over it: the directory, not today's file.
    if let Ok(real) = Path::new("/etc/resolv.conf").canonicalize() {
        if let Some(dir) = real.parent().filter(|d| *d != Path::new("/etc")) {
            out.push(dir.to_path_buf());
        }
    }
    let conf = std::fs::read_to_string("/etc/nsswitch.conf").unwrap_or_default();
    for module in hosts_modules(&conf) {
        let name = format!("libnss_{module}.so.2");
        let found = LIB_DIRS.iter().map(|d| Path::new(d).join(&name));
        out.extend(found.filter_map(|p| p.canonicalize().ok()));
    }
    out
}

/// The modules of nsswitch.conf's `hosts:` line that glibc loads from a
/// library (`[NOTFOUND=return]` and the like are actions, not modules).
fn hosts_modules(conf: &str) -> Vec<String> {
    conf.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .find_map(|l| l.trim().strip_prefix("hosts:"))
        .map(|rest| {
            rest.split_whitespace()
                .filter(|w| !w.starts_with('[') && !w.ends_with(']'))
                .filter(|w| !matches!(*w, "files" | "dns"))
                .filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nsswitch_hosts_line_names_the_loadable_modules() {
        let conf = "# comment\npasswd: files systemd\nhosts:          files mdns4_minimal [NOTFOUND=return] dns myhostname # x\n";
        assert_eq!(hosts_modules(conf), vec!["mdns4_minimal", "myhostname"]);
        assert!(hosts_modules("passwd: files\n").is_empty());
    }

    #[test]
    fn ca_directories_bring_the_directories_their_links_lead_to() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let store = root.join("store");
        let certs = root.join("certs");
        std::fs::create_dir_all(&store).unwrap();
        std::fs::create_dir_all(&certs).unwrap();
        std::fs::write(store.join("a.pem"), "x").unwrap();
        std::os::unix::fs::symlink(store.join("a.pem"), certs.join("1234.0")).unwrap();
        let bundle = root.join("bundle.pem");
        std::fs::write(&bundle, "x").unwrap();
        let got = ca_roots_from(
            Some(bundle.clone().into()),
            Some(certs.clone().into()),
            &["/nonexistent/ca.pem"],
            &[],
        );
        assert_eq!(got, vec![bundle, certs, store]);
    }
}
