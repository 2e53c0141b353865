//! What the sandboxed server may touch, worked out once: from the command
//! line (app directory, database, service URLs) before the app loads, and
//! from the manifest the app declared while loading (`fs.read`, `fs.write`,
//! `hosts`). Plain data: the kernel rules are made from it elsewhere.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::services::Service;
use super::system;

const DNS_PORT: u16 = 53;

/// TCP connections the process may open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Connect {
    /// The manifest lists hosts. http and smtp reach them on whatever port
    /// a URL or the `port` option names, and Landlock rules name ports, not
    /// hosts: the capability's host allow-list is what narrows it.
    Any,
    /// Only these ports (PostgreSQL, Redis, DNS over TCP); none if empty.
    Ports(BTreeSet<u16>),
}

/// What the server may do once its app has loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Policy {
    /// Files and directory trees it may read.
    pub read: Vec<PathBuf>,
    /// Trees it may read, write, create and remove in (`fs.write`).
    pub write: Vec<PathBuf>,
    /// Files it may read and write but not create: the SQLite database and
    /// the -wal and -shm files its open connections created already.
    pub db_files: Vec<PathBuf>,
    /// Directories it may remove files from: the database's, so a clean
    /// stop removes the -wal and -shm files as it does unsandboxed.
    pub remove_in: Vec<PathBuf>,
    pub connect: Connect,
    /// UDP sockets (DNS) are allowed: the manifest lists hosts, or a
    /// service URL names its host rather than giving an address.
    pub dns: bool,
    /// Paths the manifest names that do not exist: allowed nothing (the
    /// kernel rules need an existing file), reported at start.
    pub missing: Vec<PathBuf>,
}

/// Where the database is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DbTarget {
    File(PathBuf),
    /// `:memory:` or a PostgreSQL URL: no file.
    None,
}

/// What is known before the app loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Facts {
    /// The app directory; `None` for an app built into the executable.
    pub app_dir: Option<PathBuf>,
    /// This executable: a built app's files come from it, and a panic's
    /// backtrace reads its symbols.
    pub exe: Option<PathBuf>,
    pub db: DbTarget,
    pub services: Vec<Service>,
    /// Relative manifest paths are taken from here, like `-d`'s.
    pub cwd: PathBuf,
    /// `--tls-cert` and `--tls-key`: their directories stay readable, so a
    /// renewed pair (new files, often behind symlinks) is read on reload.
    pub tls: Vec<PathBuf>,
    /// `--acme-cache`, with `--acme`: renewed certificates are written there.
    pub acme_cache: Option<PathBuf>,
}

/// The manifest's fields the sandbox reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Declared {
    pub read: Vec<String>,
    pub write: Vec<String>,
    pub hosts: bool,
}

impl Declared {
    /// From the manifest as the app wrote it (`None`: it declared none).
    /// `fs` is only read here (no capability uses it), so its shape is
    /// checked here too.
    pub(crate) fn from_manifest(raw: Option<&Value>) -> Result<Declared, String> {
        let Some(raw) = raw else {
            return Ok(Declared::default());
        };
        let hosts = matches!(raw.get("hosts"), Some(Value::Array(h)) if !h.is_empty());
        let (read, write) = match raw.get("fs") {
            None | Some(Value::Null) => (Vec::new(), Vec::new()),
            Some(fs @ Value::Object(_)) => (paths(fs, "read")?, paths(fs, "write")?),
            Some(_) => {
                return Err(
                    "app.manifest: `fs` must be a table: { read = {paths}, write = {paths} }"
                        .to_string(),
                )
            }
        };
        Ok(Declared { read, write, hosts })
    }
}

fn paths(fs: &Value, key: &str) -> Result<Vec<String>, String> {
    let bad = || format!("app.manifest: `fs.{key}` must be a list of paths (strings)");
    match fs.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        // Lua's empty table encodes as an empty object.
        Some(Value::Object(o)) if o.is_empty() => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(bad))
            .collect(),
        Some(_) => Err(bad()),
    }
}

impl Policy {
    /// The policy for `facts` and what the app declared. Reads the file
    /// system: paths are made absolute with symlinks resolved (the kernel
    /// checks the file a path leads to), and the database's -wal and -shm
    /// files exist by now (its connections are open).
    pub(crate) fn new(facts: &Facts, declared: &Declared) -> Policy {
        let dns = declared.hosts || facts.services.iter().any(|s| s.named);
        let mut read: Vec<PathBuf> = Vec::new();
        read.extend(facts.app_dir.iter().cloned());
        read.extend(facts.exe.iter().cloned());
        read.extend(existing(&[Path::new("/dev/urandom")]));
        if declared.hosts {
            read.extend(system::ca_roots());
        }
        if dns {
            read.extend(system::resolver_files());
        }
        let mut missing = Vec::new();
        let mut resolve = |list: &[String]| -> Vec<PathBuf> {
            list.iter()
                .filter_map(|p| {
                    let path = facts.cwd.join(p);
                    match path.canonicalize() {
                        Ok(real) => Some(real),
                        Err(_) => {
                            missing.push(path);
                            None
                        }
                    }
                })
                .collect()
        };
        read.extend(resolve(&declared.read));
        read.extend(
            facts
                .tls
                .iter()
                .filter_map(|f| facts.cwd.join(f).canonicalize().ok())
                .filter_map(|f| f.parent().map(Path::to_path_buf)),
        );
        let mut write = resolve(&declared.write);
        write.extend(
            facts
                .acme_cache
                .iter()
                .filter_map(|d| facts.cwd.join(d).canonicalize().ok()),
        );
        let (db_files, remove_in) = match &facts.db {
            DbTarget::File(db) => sqlite_files(&facts.cwd.join(db)),
            DbTarget::None => (Vec::new(), Vec::new()),
        };
        let connect = if declared.hosts {
            Connect::Any
        } else {
            let mut ports: BTreeSet<u16> = facts.services.iter().filter_map(|s| s.port).collect();
            if dns {
                ports.insert(DNS_PORT);
            }
            Connect::Ports(ports)
        };
        Policy {
            read: dedup(read),
            write: dedup(write),
            db_files,
            remove_in,
            connect,
            dns,
            missing,
        }
    }

    /// What it allows of files and TCP, for the log.
    pub(crate) fn summary(&self) -> String {
        let list = |paths: &[PathBuf]| match paths {
            [] => "nothing".to_string(),
            _ => paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let connect = match &self.connect {
            Connect::Any => "any port (the manifest lists hosts)".to_string(),
            Connect::Ports(p) if p.is_empty() => "none".to_string(),
            Connect::Ports(p) => {
                let p: Vec<String> = p.iter().map(u16::to_string).collect();
                format!("port {}", p.join(", "))
            }
        };
        let mut write = self.db_files.clone();
        write.extend(self.write.iter().cloned());
        format!(
            "read {}; write {}; tcp connect {connect}, bind none",
            list(&self.read),
            list(&write),
        )
    }
}

/// The database file and the SQLite files beside it that exist, and its
/// directory. Nothing may be created there: the -wal and -shm files exist
/// while any connection is open, and the server keeps one open throughout.
fn sqlite_files(db: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let Ok(real) = db.canonicalize() else {
        return (Vec::new(), Vec::new());
    };
    let mut files = vec![real.clone()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut side = real.clone().into_os_string();
        side.push(suffix);
        let side = PathBuf::from(side);
        if side.exists() {
            files.push(side);
        }
    }
    let dir = real.parent().map(Path::to_path_buf).into_iter().collect();
    (files, dir)
}

/// Those of `paths` that exist, made absolute with symlinks resolved.
pub(crate) fn existing(paths: &[&Path]) -> Vec<PathBuf> {
    paths.iter().filter_map(|p| p.canonicalize().ok()).collect()
}

fn dedup(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = BTreeSet::new();
    paths
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts(dir: &Path, db: DbTarget, services: Vec<Service>) -> Facts {
        Facts {
            app_dir: Some(dir.join("app")),
            exe: None,
            db,
            services,
            cwd: dir.to_path_buf(),
            tls: Vec::new(),
            acme_cache: None,
        }
    }

    #[test]
    fn the_manifest_fs_lists_are_read_and_checked() {
        let d = Declared::from_manifest(Some(&json!({
            "fs": {"read": ["a", "/b"], "write": {}}, "hosts": ["x.com"]
        })))
        .unwrap();
        assert_eq!(d.read, vec!["a", "/b"]);
        assert!(d.write.is_empty() && d.hosts);
        let none = Declared::from_manifest(Some(&json!({"hosts": []}))).unwrap();
        assert_eq!(none, Declared::default());
        assert_eq!(Declared::from_manifest(None).unwrap(), Declared::default());
        let err = Declared::from_manifest(Some(&json!({"fs": {"write": "/tmp"}}))).unwrap_err();
        assert_eq!(
            err,
            "app.manifest: `fs.write` must be a list of paths (strings)"
        );
        assert!(Declared::from_manifest(Some(&json!({"fs": ["/tmp"]}))).is_err());
        assert!(Declared::from_manifest(Some(&json!({"fs": {"read": [1]}}))).is_err());
    }

    #[test]
    fn without_hosts_only_service_ports_may_be_reached() {
        let dir = tempfile::tempdir().unwrap();
        let ip = Service {
            port: Some(6543),
            named: false,
        };
        let p = Policy::new(
            &facts(dir.path(), DbTarget::None, vec![ip.clone()]),
            &Declared::default(),
        );
        assert_eq!(p.connect, Connect::Ports([6543].into()));
        assert!(!p.dns);
        let named = Service {
            port: Some(6379),
            named: true,
        };
        let p = Policy::new(
            &facts(dir.path(), DbTarget::None, vec![ip, named]),
            &Declared::default(),
        );
        assert_eq!(p.connect, Connect::Ports([53, 6379, 6543].into()));
        assert!(p.dns);
        let hosts = Declared {
            hosts: true,
            ..Declared::default()
        };
        let p = Policy::new(&facts(dir.path(), DbTarget::None, vec![]), &hosts);
        assert_eq!(p.connect, Connect::Any);
        assert!(p.dns);
        assert!(
            p.summary().contains("tcp connect any port"),
            "{}",
            p.summary()
        );
    }

    #[test]
    fn manifest_paths_are_taken_from_the_current_directory() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("exports")).unwrap();
        std::fs::write(real.join("ref.csv"), "x").unwrap();
        let declared = Declared {
            read: vec!["ref.csv".into(), "gone".into()],
            write: vec!["exports".into()],
            hosts: false,
        };
        let p = Policy::new(&facts(&real, DbTarget::None, vec![]), &declared);
        assert!(p.read.contains(&real.join("ref.csv")), "{:?}", p.read);
        assert_eq!(p.write, vec![real.join("exports")]);
        assert_eq!(p.missing, vec![real.join("gone")]);
    }

    #[test]
    fn the_directories_of_the_tls_files_stay_readable_for_renewals() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        // certbot's layout: live/ links into archive/, where renewals land.
        std::fs::create_dir_all(real.join("archive")).unwrap();
        std::fs::create_dir_all(real.join("live")).unwrap();
        std::fs::write(real.join("archive/cert1.pem"), "x").unwrap();
        std::os::unix::fs::symlink(real.join("archive/cert1.pem"), real.join("live/cert.pem"))
            .unwrap();
        let mut f = facts(&real, DbTarget::None, vec![]);
        f.tls = vec!["live/cert.pem".into()];
        let p = Policy::new(&f, &Declared::default());
        assert!(p.read.contains(&real.join("archive")), "{:?}", p.read);
    }

    #[test]
    fn the_database_and_its_existing_sidecars_are_writable() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::write(real.join("data.db"), "").unwrap();
        std::fs::write(real.join("data.db-wal"), "").unwrap();
        let f = facts(&real, DbTarget::File("data.db".into()), vec![]);
        let p = Policy::new(&f, &Declared::default());
        assert_eq!(
            p.db_files,
            vec![real.join("data.db"), real.join("data.db-wal")]
        );
        assert_eq!(p.remove_in, vec![real.clone()]);
        assert!(p.summary().contains("data.db-wal"), "{}", p.summary());
    }
}
