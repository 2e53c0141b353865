//! The database servers of the `pg` and `redis` tables: one private
//! PostgreSQL cluster and one Redis server (crates/cove-testsvc), started
//! once per run when the plan needs them and shared by every contender.
//! Both are pinned to the load generator's core, so the app servers keep
//! theirs; the runner reads their process trees' CPU beside the app's.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use anyhow::{anyhow, bail, Context, Result};
use cove_testsvc::{Postgres, Redis};

use crate::procstat::{listener_root, tree};
use crate::workloads::{Table, PG_ITEMS};

/// One running database server.
#[derive(Debug, Clone)]
pub struct DbServer {
    pub url: String,
    /// The root of its process tree: the postmaster, redis-server.
    pub root: u32,
    /// `15.14`, `7.0.15`.
    pub version: String,
}

/// The database servers of one run.
#[derive(Debug, Default)]
pub struct Services {
    pub pg: Option<DbServer>,
    pub redis: Option<DbServer>,
    /// Why a server that the plan needs is not there.
    pub missing: Vec<(Table, String)>,
    /// The core both servers are pinned to.
    pub core: u32,
}

/// The handles: dropping them stops the servers and removes their files.
/// A static, so the signal handler can stop them too ([`stop_all`]).
static HANDLES: Mutex<(Option<Postgres>, Option<Redis>)> = Mutex::new((None, None));

/// The statements that set up the `pg` table's database (each run once,
/// in order, through psql).
pub fn schema() -> Vec<String> {
    vec![
        "DROP TABLE IF EXISTS bench_items, bench_writes".into(),
        "CREATE TABLE bench_items (id integer PRIMARY KEY, name text NOT NULL, \
         value integer NOT NULL) WITH (autovacuum_enabled = false)"
            .into(),
        format!(
            "INSERT INTO bench_items (id, name, value) \
             SELECT i, 'item-' || i, (i * 7919) % 10007 FROM generate_series(1, {PG_ITEMS}) AS i"
        ),
        "CREATE TABLE bench_writes (id serial PRIMARY KEY, payload text NOT NULL, \
         ts bigint NOT NULL) WITH (autovacuum_enabled = false)"
            .into(),
        "VACUUM ANALYZE bench_items".into(),
    ]
}

impl Services {
    /// Start the servers the plan needs; one that cannot start is listed
    /// in `missing` with the reason (its tables are then not measured).
    pub fn start(need_pg: bool, need_redis: bool, core: u32) -> Services {
        let mut s = Services {
            core,
            ..Services::default()
        };
        if need_pg {
            match start_pg(core) {
                Ok(pg) => s.pg = Some(pg),
                Err(e) => s.missing.push((Table::Pg, format!("{e:#}"))),
            }
        }
        if need_redis {
            match start_redis(core) {
                Ok(r) => s.redis = Some(r),
                Err(e) => s.missing.push((Table::Redis, format!("{e:#}"))),
            }
        }
        s
    }

    /// The server a table's requests reach.
    pub fn for_table(&self, table: Table) -> Option<&DbServer> {
        match table {
            Table::Pg => self.pg.as_ref(),
            Table::Redis => self.redis.as_ref(),
            _ => None,
        }
    }

    /// Roots of every running server's process tree.
    pub fn roots(&self) -> Vec<u32> {
        self.pg.iter().chain(&self.redis).map(|d| d.root).collect()
    }

    /// What the report says about the servers.
    pub fn describe(&self) -> Vec<(Table, String)> {
        let mut out = Vec::new();
        if let Some(pg) = &self.pg {
            out.push((
                Table::Pg,
                format!(
                    "PostgreSQL {}: a private cluster started by cove-testsvc (fsync=off, \
                     synchronous_commit=off, full_page_writes=off, max_connections=200, the \
                     rest default: shared_buffers 128 MB), pinned to core {}; database `bench`: \
                     `bench_items` (id integer primary key, name, value; {} rows, vacuumed and \
                     analyzed before the run) and `bench_writes` (id serial primary key, \
                     payload, ts), autovacuum off on both so that no vacuum of one \
                     contender's rows runs during another's measurement",
                    pg.version,
                    self.core,
                    crate::report::thousands(f64::from(PG_ITEMS)),
                ),
            ));
        }
        if let Some(r) = &self.redis {
            out.push((
                Table::Redis,
                format!(
                    "Redis {}: one redis-server started by cove-testsvc (no persistence), \
                     pinned to core {}",
                    r.version, self.core
                ),
            ));
        }
        out
    }
}

/// Stop every server (also from the signal handler).
pub fn stop_all() {
    let (pg, redis) = {
        let mut h = HANDLES.lock().unwrap_or_else(|e| e.into_inner());
        (h.0.take(), h.1.take())
    };
    drop(redis);
    drop(pg);
}

/// The message of a caught panic.
fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panicked".into())
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Run `f`, turning a panic (cove-testsvc panics on failures) into an error.
fn caught<T>(what: &str, f: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|e| anyhow!("{what}: {}", panic_text(e.as_ref())))
}

/// Pin every process and thread of the tree under `root` to `core`
/// (processes forked later, PostgreSQL's backends, inherit it).
fn pin(root: u32, core: u32) -> Result<()> {
    for pid in tree(root) {
        let ok = Command::new("taskset")
            .args(["-a", "-p", "-c", &core.to_string(), &pid.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .context("cannot run taskset")?
            .success();
        // A process that exited meanwhile is fine; the root must be pinned.
        if !ok && pid == root {
            bail!("taskset could not pin pid {root} to core {core}");
        }
    }
    Ok(())
}

/// psql: on PATH, else in the newest /usr/lib/postgresql/<v>/bin.
fn psql_program() -> PathBuf {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("psql"))
            .find(|p| p.is_file())
    });
    if let Some(p) = on_path {
        return p;
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            let p = e.path().join("bin/psql");
            p.is_file().then_some((v, p))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map_or_else(|| PathBuf::from("psql"), |(_, p)| p)
}

/// Run `statements` (each its own `-c`) against `url`; the output.
fn psql(url: &str, statements: &[String]) -> Result<String> {
    let mut cmd = Command::new(psql_program());
    cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url]);
    for s in statements {
        cmd.arg("-c").arg(s);
    }
    let out = cmd
        .env("PGCONNECT_TIMEOUT", "10")
        .stdin(Stdio::null())
        .output()
        .context("cannot run psql")?;
    if !out.status.success() {
        bail!(
            "psql failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn start_pg(core: u32) -> Result<DbServer> {
    let pg = caught("PostgreSQL did not start", Postgres::start)?
        .ok_or_else(|| anyhow!("no PostgreSQL server binaries (initdb, postgres) or psql"))?;
    let port = pg.port();
    let made = caught("CREATE DATABASE bench failed", || {
        pg.create_database("bench")
    });
    // From here on stop_all stops it, also on an error below.
    HANDLES.lock().unwrap_or_else(|e| e.into_inner()).0 = Some(pg);
    let url = made?;
    psql(&url, &schema()).context("setting up the bench database")?;
    let root = listener_root(port).ok_or_else(|| anyhow!("no process listens on port {port}"))?;
    pin(root, core)?;
    let version = psql(&url, &["SHOW server_version".to_string()])?;
    Ok(DbServer { url, root, version })
}

fn start_redis(core: u32) -> Result<DbServer> {
    let redis =
        caught("Redis did not start", Redis::start)?.ok_or_else(|| anyhow!("no redis-server"))?;
    let (url, port) = (redis.url(), redis.port());
    HANDLES.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(redis);
    let root = listener_root(port).ok_or_else(|| anyhow!("no process listens on port {port}"))?;
    pin(root, core)?;
    // On PATH, like cove-testsvc finds it (the process's own exe may be a
    // link target such as Debian's redis-check-rdb, which prints another
    // version line).
    let out = Command::new("redis-server").arg("--version").output();
    let version = out
        .ok()
        .and_then(|o| redis_version(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or_else(|| "(unknown version)".into());
    Ok(DbServer { url, root, version })
}

/// `7.0.15` from `Redis server v=7.0.15 sha=… malloc=…`.
pub fn redis_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_versions() {
        let line = "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=ae4d";
        assert_eq!(redis_version(line).as_deref(), Some("7.0.15"));
        assert_eq!(redis_version("nothing"), None);
    }

    #[test]
    fn the_schema_seeds_every_item() {
        let s = schema();
        assert!(s[0].starts_with("DROP TABLE IF EXISTS"));
        assert!(s.iter().any(|q| q.contains("generate_series(1, 10000)")));
        // VACUUM cannot run in a transaction block: it is a statement of its own.
        assert_eq!(s.last().unwrap(), "VACUUM ANALYZE bench_items");
        assert!(s.iter().all(|q| !q.contains(';')));
    }

    #[test]
    fn panics_become_errors() {
        let e = caught("it broke", || -> u32 { panic!("boom\nmore") }).unwrap_err();
        assert_eq!(e.to_string(), "it broke: boom");
        assert_eq!(caught("fine", || 7).unwrap(), 7);
    }

    #[test]
    fn missing_servers_are_reported_per_table() {
        let s = Services::default();
        assert!(s.for_table(Table::Pg).is_none());
        assert!(s.roots().is_empty());
        assert!(s.describe().is_empty());
        let s = Services {
            pg: Some(DbServer {
                url: "postgres://x".into(),
                root: 10,
                version: "15.14".into(),
            }),
            core: 1,
            ..Services::default()
        };
        assert_eq!(s.for_table(Table::Pg).map(|d| d.root), Some(10));
        assert!(s.for_table(Table::Redis).is_none());
        assert!(s.for_table(Table::Hello).is_none());
        assert_eq!(s.roots(), [10]);
        let d = s.describe();
        assert_eq!(d.len(), 1);
        assert!(d[0].1.starts_with("PostgreSQL 15.14: "), "{}", d[0].1);
        assert!(d[0].1.contains("pinned to core 1"));
        assert!(d[0].1.contains("10,000 rows"));
    }
}
