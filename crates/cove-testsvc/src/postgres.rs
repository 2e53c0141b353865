//! A private PostgreSQL cluster.

use std::fs;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{
    find_program, is_executable, is_root, launch, launch_on_free_port, log_tail, unavailable,
    LaunchError, Process,
};

/// Settings appended to the cluster's postgresql.conf: TCP on loopback
/// only, no Unix socket (so no /var/run/postgresql), and durability off
/// since the cluster is thrown away.
const SETTINGS: &str = "
# cove-testsvc
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
";

/// A private PostgreSQL 15 cluster: initdb in a temp dir, `postgres`
/// started on a free port on 127.0.0.1, fsync=off.
///
/// The superuser role `cove` has a random password, and the database
/// `cove` exists. Run as root, the cluster belongs to the user `nobody`
/// (initdb refuses to run as root). Dropping it stops the server
/// (immediate shutdown) and removes the temp dir.
pub struct Postgres {
    process: Process,
    /// The server binaries (initdb, postgres).
    bin: PathBuf,
    psql: PathBuf,
    /// The uid and gid the server runs as, when not the current user.
    owner: Option<(u32, u32)>,
    port: u16,
    password: String,
    /// Holds `data/` (the cluster) and `postgres.log`.
    dir: tempfile::TempDir,
}

impl Postgres {
    /// None (after printing one line to stderr saying why, e.g. "skipped:
    /// no PostgreSQL server binaries") when the binaries are missing,
    /// unless the env var COVE_REQUIRE_SERVICES is set, then panic with
    /// that reason. Any other failure panics with the server's log tail.
    pub fn start() -> Option<Postgres> {
        let Some(bin) = server_bindir() else {
            return unavailable("no PostgreSQL server binaries (initdb, postgres)");
        };
        let Some(psql) = Some(bin.join("psql"))
            .filter(|p| is_executable(p))
            .or_else(|| find_program("psql"))
        else {
            return unavailable("no psql (the PostgreSQL client)");
        };
        let owner = is_root()
            .then(|| nobody().expect("running as root, and no user `nobody` to run PostgreSQL as"));
        let mut dir = tempfile::Builder::new();
        dir.prefix("cove-pg-");
        // The user `nobody` must be able to reach its cluster, whatever
        // TMPDIR says.
        let dir = match owner {
            Some(_) => dir.tempdir_in("/tmp"),
            None => dir.tempdir(),
        }
        .expect("create a temp dir");

        let password = random_password();
        let pwfile = dir.path().join("pwfile");
        fs::write(&pwfile, &password).expect("write the password file");
        if let Some((uid, gid)) = owner {
            for path in [dir.path(), &pwfile] {
                std::os::unix::fs::chown(path, Some(uid), Some(gid))
                    .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
            }
        }
        let data = dir.path().join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "cove",
                "-A",
                "scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
            ])
            .arg("--no-sync")
            .arg(format!("--pwfile={}", pwfile.display()))
            .current_dir(dir.path())
            .stdin(Stdio::null());
        as_owner(&mut initdb, owner);
        let out = initdb.output().expect("run initdb");
        if !out.status.success() {
            panic!(
                "initdb failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let _ = fs::remove_file(&pwfile);
        let conf = data.join("postgresql.conf");
        let mut text = fs::read_to_string(&conf).expect("read postgresql.conf");
        text.push_str(SETTINGS);
        fs::write(&conf, text).expect("write postgresql.conf");

        let mut pg = Postgres {
            process: Process::default(),
            bin,
            psql,
            owner,
            port: 0,
            password,
            dir,
        };
        let (port, child) = launch_on_free_port("PostgreSQL", |port| pg.spawn(port));
        pg.port = port;
        pg.process.set(child);
        pg.psql("postgres", "CREATE DATABASE cove");
        Some(pg)
    }

    /// `postgres://cove:<password>@127.0.0.1:<port>/cove`: the superuser
    /// `cove` and its database.
    pub fn url(&self) -> String {
        self.url_for("cove")
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A fresh empty database in this cluster (CREATE DATABASE <name>),
    /// returning its URL; for tests that need isolation.
    pub fn create_database(&self, name: &str) -> String {
        self.psql(
            "postgres",
            &format!("CREATE DATABASE {}", quote_ident(name)),
        );
        self.url_for(name)
    }

    /// Stop the server (fast shutdown) without dropping the data dir, and
    /// start it again on the same port: for tests of "PostgreSQL restarted
    /// while serving". Also starts a server that [`stop`](Self::stop)ped.
    pub fn restart(&self) {
        self.stop();
        match self.spawn(self.port) {
            Ok(child) => self.process.set(child),
            Err(LaunchError::PortInUse) => panic!(
                "PostgreSQL did not restart: port {} is in use\n{}",
                self.port,
                log_tail(&self.log())
            ),
            Err(LaunchError::Failed(why)) => panic!("PostgreSQL did not restart: {why}"),
        }
    }

    /// Stop the server now (fast shutdown: sessions are disconnected);
    /// the data stays for [`restart`](Self::restart). Drop also stops it
    /// (immediate mode) and removes the temp dir.
    pub fn stop(&self) {
        self.process.stop(libc::SIGINT, Duration::from_secs(30));
    }

    fn url_for(&self, database: &str) -> String {
        format!(
            "postgres://cove:{}@127.0.0.1:{}/{}",
            self.password,
            self.port,
            percent_encode(database)
        )
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("postgres.log")
    }

    /// Starts the postmaster on `port` and waits until it accepts
    /// connections.
    fn spawn(&self, port: u16) -> Result<Child, LaunchError> {
        let data = self.dir.path().join("data");
        let mut cmd = Command::new(self.bin.join("postgres"));
        cmd.arg("-D")
            .arg(&data)
            .arg("-p")
            .arg(port.to_string())
            .current_dir(self.dir.path());
        as_owner(&mut cmd, self.owner);
        let pid_file = data.join("postmaster.pid");
        launch(&mut cmd, &self.log(), |pid, _| {
            // Line 1 of postmaster.pid is the pid, line 8 the status:
            // "ready" once it accepts connections.
            let text = fs::read_to_string(&pid_file).unwrap_or_default();
            let mut lines = text.lines().map(str::trim);
            lines.next() == Some(pid.to_string().as_str()) && lines.nth(6) == Some("ready")
        })
    }

    /// Runs `sql` with psql as `cove` in `database`; panics on failure.
    fn psql(&self, database: &str, sql: &str) {
        let out = Command::new(&self.psql)
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d"])
            .arg(self.url_for(database))
            .arg("-c")
            .arg(sql)
            .env("PGCONNECT_TIMEOUT", "10")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", self.psql.display()));
        if !out.status.success() {
            panic!(
                "psql {sql:?} failed ({}): {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim(),
                log_tail(&self.log())
            );
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // Immediate shutdown (SIGQUIT), then SIGKILL if it lingers; the
        // temp dir goes after this, with the remaining fields.
        self.process.stop(libc::SIGQUIT, Duration::from_secs(10));
    }
}

/// The directory with `initdb` and `postgres`: the highest version under
/// /usr/lib/postgresql (Debian), else what `pg_config --bindir` names,
/// else PATH.
fn server_bindir() -> Option<PathBuf> {
    let has_server =
        |dir: &Path| is_executable(&dir.join("initdb")) && is_executable(&dir.join("postgres"));
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            has_server(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let from_pg_config = find_program("pg_config")
        .and_then(|pg_config| Command::new(pg_config).arg("--bindir").output().ok())
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    if let Some(bin) = from_pg_config.filter(|bin| has_server(bin)) {
        return Some(bin);
    }
    let initdb = find_program("initdb")?;
    initdb
        .parent()
        .filter(|bin| has_server(bin))
        .map(Path::to_path_buf)
}

/// The uid and gid of the user `nobody`, from /etc/passwd.
fn nobody() -> Option<(u32, u32)> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next()? == "nobody").then_some(())?;
        let uid = fields.nth(1)?.parse().ok()?;
        let gid = fields.next()?.parse().ok()?;
        Some((uid, gid))
    })
}

fn as_owner(cmd: &mut Command, owner: Option<(u32, u32)>) {
    if let Some((uid, gid)) = owner {
        cmd.uid(uid).gid(gid);
    }
}

/// 32 hex digits from /dev/urandom.
fn random_password() -> String {
    let mut bytes = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("read /dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `name` as an SQL identifier in double quotes.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `name` for the path of a URL: unreserved characters as they are, the
/// rest %XX.
fn percent_encode(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accepts;

    /// Runs `sql` through psql against `url`, returning its output.
    fn query(pg: &Postgres, url: &str, sql: &str) -> Result<String, String> {
        let out = Command::new(&pg.psql)
            .args(["-X", "-A", "-t", "-d", url, "-c", sql])
            .stdin(Stdio::null())
            .output()
            .expect("run psql");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    #[test]
    fn starts_answers_restarts_and_stops() {
        let Some(pg) = Postgres::start() else { return };
        let url = pg.url();
        assert_eq!(
            url,
            format!(
                "postgres://cove:{}@127.0.0.1:{}/cove",
                pg.password,
                pg.port()
            )
        );
        assert_eq!(query(&pg, &url, "select 1").unwrap(), "1");
        assert_eq!(query(&pg, &url, "select current_user").unwrap(), "cove");
        // The password is checked over TCP.
        let wrong = url.replace(&pg.password, "wrong");
        assert!(query(&pg, &wrong, "select 1").is_err());

        query(
            &pg,
            &url,
            "create table t (x int); insert into t values (42)",
        )
        .unwrap();
        pg.restart();
        assert_eq!(query(&pg, &url, "select x from t").unwrap(), "42");

        let other = pg.create_database("other db");
        assert!(other.ends_with("/other%20db"), "{other}");
        assert_eq!(
            query(&pg, &other, "select current_database()").unwrap(),
            "other db"
        );
        assert!(query(&pg, &other, "select x from t").is_err());

        pg.stop();
        assert!(!accepts(pg.port()));
        pg.restart();
        assert_eq!(query(&pg, &url, "select x from t").unwrap(), "42");

        let (port, dir) = (pg.port(), pg.dir.path().to_path_buf());
        drop(pg);
        assert!(!accepts(port));
        assert!(!dir.exists());
    }

    #[test]
    fn concurrent_clusters() {
        let threads: Vec<_> = (0..3)
            .map(|_| std::thread::spawn(Postgres::start))
            .collect();
        let clusters: Vec<Postgres> = threads
            .into_iter()
            .filter_map(|t| t.join().unwrap())
            .collect();
        let mut ports: Vec<u16> = clusters.iter().map(Postgres::port).collect();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), clusters.len());
        for pg in &clusters {
            assert_eq!(query(pg, &pg.url(), "select 1").unwrap(), "1");
        }
    }

    #[test]
    fn helpers() {
        assert_eq!(quote_ident(r#"a"b"#), r#""a""b""#);
        assert_eq!(percent_encode("a b/c_d"), "a%20b%2Fc_d");
    }
}
