//! Which servers run and which (table, server, workload, connections)
//! measurements a run makes.

use std::ffi::OsString;
use std::path::Path;

use crate::peers::{self, PeerSpec};
use crate::servers::Launch;
use crate::wire::Wire;
use crate::workloads::{Group, Table, Workload, TABLES};
use crate::Config;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `cove baseline`: raw hyper, no script; the CPU ratios' denominator.
    Baseline,
    Cove,
    Peer,
}

/// One server process to start.
#[derive(Debug, Clone)]
pub struct ServerDef {
    /// Unique: `cove-lua`, `go`, `go-2w`.
    pub key: String,
    pub label: String,
    pub kind: Kind,
    pub groups: Vec<Group>,
    pub workers: u32,
    pub launch: Launch,
    /// Cove takes `-p PORT`; peers read `PORT` from the environment.
    pub port_flag: bool,
    pub version: String,
    /// Binary or install size in bytes.
    pub size: Option<u64>,
    pub note: Option<String>,
    /// Connections to the database of each group, for the `pg` and `redis`
    /// tables.
    pub pool: Vec<(Group, String)>,
    /// Cove with `--metrics` and the JSON access log on (the hello table's
    /// rows that measure what observing a request costs).
    pub observed: bool,
}

impl ServerDef {
    pub fn is_cove(&self) -> bool {
        self.kind != Kind::Peer
    }

    /// Serves HTTPS (`tls` and `h2` groups): it gets the run's certificate.
    pub fn wants_cert(&self) -> bool {
        Wire::of_server(&self.groups).is_tls()
    }
}

/// Servers in the concurrency sweep (the language benchmark's set).
const SWEEP: &[&str] = &["cove-lua", "cove-js", "hyper", "bun", "node-http"];

/// A Cove server running `app`, or the scriptless baseline when `app` is `None`.
fn cove_def(
    cfg: &Config,
    key: &str,
    label: &str,
    groups: Vec<Group>,
    extra: &[&str],
    workers: u32,
    app: Option<&Path>,
) -> ServerDef {
    let mut args: Vec<OsString> = extra.iter().map(OsString::from).collect();
    args.extend(["--workers".into(), workers.to_string().into()]);
    let kind = match app {
        Some(app) => {
            args.push(app.into());
            Kind::Cove
        }
        None => Kind::Baseline,
    };
    ServerDef {
        key: key.into(),
        label: label.into(),
        kind,
        groups,
        workers,
        launch: Launch {
            program: cfg.cove.clone(),
            args,
            env: Vec::new(),
            cwd: cfg.root.clone(),
            cores: cores(cfg, workers),
        },
        port_flag: true,
        version: String::new(),
        size: std::fs::metadata(&cfg.cove).ok().map(|m| m.len()),
        note: None,
        pool: Vec::new(),
        observed: false,
    }
}

/// What each worker of Cove's pg app holds.
pub const COVE_PG_POOL: &str = "up to 4 per worker, pipelined";
pub const COVE_REDIS_POOL: &str = "1 per worker, multiplexed";

fn cores(cfg: &Config, workers: u32) -> String {
    if workers > 1 {
        format!("{},{}", cfg.server_core, cfg.wrk_core)
    } else {
        cfg.server_core.to_string()
    }
}

/// Cove's servers: the baseline, then per runtime (Lua, JavaScript) the app
/// on 1 and 2 workers and the app with group commit off (a reference for
/// the write rows), then per runtime the template app, then per runtime the
/// PostgreSQL + Redis app on 1 and 2 workers, then per runtime the app over
/// HTTPS and as h2c, then per runtime the WebSocket app (the ws table),
/// then per runtime the app with metrics and the JSON access log on.
pub fn cove_servers(cfg: &Config) -> Vec<ServerDef> {
    let both = vec![Group::Http, Group::Sqlite];
    let mut out = vec![cove_def(
        cfg,
        "cove-baseline",
        "Cove baseline: raw hyper, no script",
        vec![Group::Http],
        &["baseline"],
        1,
        None,
    )];
    for (lang, name, app) in [("lua", "Lua", &cfg.app), ("js", "JS", &cfg.js_app)] {
        let key = format!("cove-{lang}");
        let label = format!("Cove ({name})");
        let app = Some(app.as_path());
        out.extend([
            cove_def(cfg, &key, &label, both.clone(), &[], 1, app),
            cove_def(
                cfg,
                &format!("{key}-nogroup"),
                &format!("{label}, `--no-group-commit`"),
                vec![Group::Sqlite],
                &["--no-group-commit"],
                1,
                app,
            ),
            cove_def(cfg, &format!("{key}-2w"), &label, both.clone(), &[], 2, app),
        ]);
    }
    for (lang, name) in [("lua", "Lua"), ("js", "JS")] {
        let app = cfg.templates.join(format!("app.{lang}"));
        out.push(cove_def(
            cfg,
            &format!("cove-{lang}-tpl"),
            &format!("Cove ({name}), template app"),
            vec![Group::Templates],
            &[],
            1,
            Some(&app),
        ));
    }
    for (lang, name) in [("lua", "Lua"), ("js", "JS")] {
        let app = cfg.pg_app.join(format!("app.{lang}"));
        for workers in [1, 2] {
            let suffix = if workers > 1 { "-2w" } else { "" };
            let mut def = cove_def(
                cfg,
                &format!("cove-{lang}-pg{suffix}"),
                &format!("Cove ({name})"),
                vec![Group::Pg, Group::Redis],
                &[],
                workers,
                Some(&app),
            );
            def.pool = vec![
                (Group::Pg, COVE_PG_POOL.into()),
                (Group::Redis, COVE_REDIS_POOL.into()),
            ];
            out.push(def);
        }
    }
    out.extend(protocol_servers(cfg));
    for (lang, name) in [("lua", "Lua"), ("js", "JS")] {
        let app = cfg.ws_app.join(format!("app.{lang}"));
        out.push(cove_def(
            cfg,
            &format!("cove-{lang}-ws"),
            &format!("Cove ({name})"),
            vec![Group::Ws],
            &[],
            1,
            Some(&app),
        ));
    }
    for (lang, name, app) in [("lua", "Lua", &cfg.app), ("js", "JS", &cfg.js_app)] {
        let mut def = cove_def(
            cfg,
            &format!("cove-{lang}-obs"),
            &format!("Cove ({name}), `--metrics` + JSON `--access-log`"),
            vec![Group::Http],
            &[],
            1,
            Some(app.as_path()),
        );
        def.observed = true;
        out.push(def);
    }
    out
}

/// The hello app per runtime for the `tls` and `h2` tables: over HTTPS
/// (the certificate's flags are added at start, HTTP/2 by ALPN) and as h2c
/// (`--h2c` on plain TCP). `cove baseline` has no TLS: no baseline row.
fn protocol_servers(cfg: &Config) -> Vec<ServerDef> {
    let mut out = Vec::new();
    for (lang, name, app) in [("lua", "Lua", &cfg.app), ("js", "JS", &cfg.js_app)] {
        let app = Some(app.as_path());
        out.push(cove_def(
            cfg,
            &format!("cove-{lang}-tls"),
            &format!("Cove ({name}), HTTPS"),
            vec![Group::Tls, Group::H2],
            &[],
            1,
            app,
        ));
        out.push(cove_def(
            cfg,
            &format!("cove-{lang}-h2c"),
            &format!("Cove ({name}), h2c"),
            vec![Group::H2c],
            &["--h2c"],
            1,
            app,
        ));
    }
    out
}

/// A peer's single-worker server, plus a two-worker one when it has a
/// workers variable.
pub fn peer_servers(cfg: &Config, spec: &PeerSpec, install_dir: &Path) -> Vec<ServerDef> {
    let dir = install_dir.join(&spec.folder);
    let (program, args) = spec.cmd.split_first().expect("cmd is never empty");
    let size_paths: Vec<_> = spec.size.iter().map(|p| dir.join(p)).collect();
    let one = |workers: u32| {
        let mut env = spec.env.clone();
        if let Some(var) = &spec.workers_env {
            env.push((var.clone(), workers.to_string()));
        }
        ServerDef {
            key: if workers > 1 {
                format!("{}-{workers}w", spec.name)
            } else {
                spec.name.clone()
            },
            label: spec.label.clone(),
            kind: Kind::Peer,
            groups: spec.groups.clone(),
            workers,
            launch: Launch {
                program: peers::resolve(program, &dir),
                args: args.iter().map(OsString::from).collect(),
                env,
                cwd: dir.clone(),
                cores: cores(cfg, workers),
            },
            port_flag: false,
            version: peers::version(&spec.version, &dir),
            size: (!size_paths.is_empty()).then(|| peers::disk_size(&size_paths)),
            note: spec.note.clone(),
            pool: spec.pool.clone(),
            observed: false,
        }
    };
    let mut out = vec![one(1)];
    if spec.workers_env.is_some() {
        out.push(one(2));
    }
    out
}

/// One cell of the report: a workload on a server at a connection count.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub table: Table,
    pub server: usize,
    pub workload: &'static Workload,
    pub connections: u32,
}

impl Measurement {
    /// `table:server:workload@connections`, what `--only` matches.
    pub fn id(&self, servers: &[ServerDef]) -> String {
        format!(
            "{}:{}:{}@{}",
            self.table.key(),
            servers[self.server].key,
            self.workload.name,
            self.connections
        )
    }
}

fn in_table(table: Table, s: &ServerDef) -> bool {
    // What observing costs is measured on the hello table only.
    if s.observed {
        return table == Table::Hello;
    }
    match table {
        Table::Hello => s.workers == 1 && s.groups.contains(&Group::Http),
        // In Hull's HTTP table the raw server answers each JSON request
        // (with its fixed JSON) just before the apps do: the denominator
        // of their CPU ratios, measured seconds and not minutes away.
        Table::HullHttp => s.workers == 1,
        Table::Routing | Table::Sqlite => s.workers == 1 && s.kind != Kind::Baseline,
        Table::Sweep => s.workers == 1 && SWEEP.contains(&s.key.as_str()),
        Table::Multi => s.workers > 1,
        Table::Templates => s.workers == 1 && s.groups.contains(&Group::Templates),
        // One and two workers: the two-worker rows sit beside the others.
        Table::Pg => s.groups.contains(&Group::Pg),
        Table::Redis => s.groups.contains(&Group::Redis),
        Table::Tls | Table::H2 | Table::Ws => s.workers == 1,
    }
}

/// Whether an `--only` pattern selects a measurement id: a substring of it,
/// except that a pattern starting with a table's key and `:` (`pg:`,
/// `redis:cove-lua-pg:`) matches from the start, so `pg:` does not also
/// select `redis:cove-lua-pg:get-incr@50`.
pub fn only_matches(id: &str, pattern: &str) -> bool {
    let anchored = pattern
        .split_once(':')
        .is_some_and(|(head, _)| TABLES.iter().any(|t| t.key() == head));
    if anchored {
        id.starts_with(pattern)
    } else {
        id.contains(pattern)
    }
}

/// The route groups that `--only` can reach when every pattern names a
/// table (`--only pg: --only redis:`): peers without one of them have no
/// row to measure, so they need not be installed. `None`: any group.
pub fn only_groups(only: &[String]) -> Option<Vec<Group>> {
    if only.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for o in only {
        let (head, _) = o.split_once(':')?;
        let table = TABLES.iter().find(|t| t.key() == head)?;
        out.extend(table.groups().iter().copied());
    }
    out.dedup();
    Some(out)
}

/// Every measurement `--only` selects (each pattern a substring of the
/// measurement's id, a table's from its start; none = all). The baseline's Hello rows are
/// kept (every CPU ratio divides by them) unless only `ws` rows are
/// measured (they are compared with Bun's instead); so is its row of any
/// other workload that is measured.
pub fn measurements(servers: &[ServerDef], connections: u32, only: &[String]) -> Vec<Measurement> {
    let mut out = Vec::new();
    for table in TABLES {
        for w in table.workloads() {
            for &c in table.connections() {
                for (i, s) in servers.iter().enumerate() {
                    // The protocol tables' servers are those of their
                    // groups; elsewhere those of the workload's group.
                    let serves = if table.is_protocol() {
                        table.groups().iter().any(|g| s.groups.contains(g))
                    } else {
                        s.groups.contains(&w.group)
                    };
                    if in_table(table, s) && serves {
                        out.push(Measurement {
                            table,
                            server: i,
                            workload: w,
                            connections: w.connections.or(c).unwrap_or(connections),
                        });
                    }
                }
            }
        }
    }
    let picked: Vec<bool> = out
        .iter()
        .map(|m| {
            let id = m.id(servers);
            only.is_empty() || only.iter().any(|o| only_matches(&id, o))
        })
        .collect();
    let measured = |m: &Measurement| {
        out.iter()
            .zip(&picked)
            .any(|(o, &p)| p && o.table == m.table && o.workload.name == m.workload.name)
    };
    let ratios = out
        .iter()
        .zip(&picked)
        .any(|(m, &p)| p && m.table != Table::Ws);
    let keep: Vec<bool> = out
        .iter()
        .zip(&picked)
        .map(|(m, &p)| {
            let raw = servers[m.server].kind == Kind::Baseline;
            p || raw && (m.table == Table::Hello && ratios || measured(m))
        })
        .collect();
    let mut keep = keep.into_iter();
    out.retain(|_| keep.next().unwrap_or(false));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn cfg() -> Config {
        let mut c = crate::parse_args(&[]).unwrap().unwrap();
        c.cove = PathBuf::from("/nonexistent/cove");
        c
    }

    fn peer(name: &str, groups: Vec<Group>, workers: bool) -> PeerSpec {
        PeerSpec {
            name: name.into(),
            label: name.into(),
            folder: name.into(),
            groups,
            cmd: vec!["./run".into()],
            env: vec![],
            workers_env: workers.then(|| "WORKERS".to_string()),
            version: vec![],
            size: vec![],
            note: None,
            pool: Vec::new(),
        }
    }

    fn servers() -> Vec<ServerDef> {
        let c = cfg();
        let mut s = cove_servers(&c);
        let dir = Path::new("/tmp/peers");
        let mut go = peer("go-pgx", vec![Group::Pg, Group::Redis], true);
        go.pool = vec![(Group::Pg, "pgxpool MaxConns 10".into())];
        s.extend(peer_servers(&c, &go, dir));
        s.extend(peer_servers(
            &c,
            &peer("bun", vec![Group::Http, Group::Sqlite], true),
            dir,
        ));
        s.extend(peer_servers(
            &c,
            &peer("deno", vec![Group::Http], false),
            dir,
        ));
        s
    }

    #[test]
    fn peers_get_a_two_worker_variant_when_they_have_one() {
        let s = servers();
        let keys: Vec<&str> = s.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "cove-baseline",
                "cove-lua",
                "cove-lua-nogroup",
                "cove-lua-2w",
                "cove-js",
                "cove-js-nogroup",
                "cove-js-2w",
                "cove-lua-tpl",
                "cove-js-tpl",
                "cove-lua-pg",
                "cove-lua-pg-2w",
                "cove-js-pg",
                "cove-js-pg-2w",
                "cove-lua-tls",
                "cove-lua-h2c",
                "cove-js-tls",
                "cove-js-h2c",
                "cove-lua-ws",
                "cove-js-ws",
                "cove-lua-obs",
                "cove-js-obs",
                "go-pgx",
                "go-pgx-2w",
                "bun",
                "bun-2w",
                "deno"
            ]
        );
        let bun2 = s.iter().find(|d| d.key == "bun-2w").unwrap();
        assert_eq!(bun2.launch.cores, "0,1");
        assert!(bun2.launch.env.contains(&("WORKERS".into(), "2".into())));
        assert_eq!(bun2.launch.program, PathBuf::from("/tmp/peers/bun/./run"));
    }

    #[test]
    fn the_observed_servers_are_in_the_hello_table_only() {
        let s = servers();
        let obs: Vec<&ServerDef> = s.iter().filter(|d| d.observed).collect();
        assert_eq!(obs.len(), 2);
        for d in obs {
            assert!(d.key.ends_with("-obs"), "{}", d.key);
            assert!(in_table(Table::Hello, d));
            for t in [
                Table::HullHttp,
                Table::Routing,
                Table::Sweep,
                Table::Tls,
                Table::Ws,
            ] {
                assert!(!in_table(t, d), "{} in {t:?}", d.key);
            }
        }
    }

    #[test]
    fn each_cove_runtime_runs_its_app() {
        let s = servers();
        // The app is the last argument; the baseline ends with `--workers 1`.
        let app = |key: &str| {
            let d = s.iter().find(|d| d.key == key).unwrap();
            let last = d.launch.args.last().unwrap().to_string_lossy();
            (d.kind, last.rsplit('/').next().unwrap().to_string())
        };
        assert_eq!(app("cove-baseline"), (Kind::Baseline, "1".into()));
        assert_eq!(app("cove-lua"), (Kind::Cove, "app.lua".into()));
        for key in ["cove-js", "cove-js-nogroup", "cove-js-2w"] {
            assert_eq!(app(key), (Kind::Cove, "app.js".into()), "{key}");
        }
        let tpl = |key: &str| {
            let d = s.iter().find(|d| d.key == key).unwrap();
            d.launch.args.last().unwrap().to_string_lossy().into_owned()
        };
        assert!(tpl("cove-lua-tpl").ends_with("bench/apps/templates/app.lua"));
        assert!(tpl("cove-js-tpl").ends_with("bench/apps/templates/app.js"));
        let js2 = s.iter().find(|d| d.key == "cove-js-2w").unwrap();
        assert_eq!((js2.workers, js2.label.as_str()), (2, "Cove (JS)"));
    }

    #[test]
    fn tables_pick_their_servers() {
        let s = servers();
        let m = measurements(&s, 50, &[]);
        let ids: Vec<String> = m.iter().map(|m| m.id(&s)).collect();
        let has = |id: &str| ids.iter().any(|i| i == id);
        assert!(has("hello:cove-baseline:hello@50"));
        assert!(has("hello:deno:json@50"));
        assert!(!has("routing:cove-baseline:routes@50"));
        assert!(has("sqlite:cove-lua-nogroup:write@50"));
        assert!(!has("sqlite:deno:write@50"));
        assert!(!has("hull-http:cove-lua-nogroup:health@50"));
        // The raw server answers Hull's JSON requests beside the apps, and
        // right before them in each round; it has no SQLite routes.
        let health: Vec<&String> = ids.iter().filter(|i| i.contains(":health@")).collect();
        assert_eq!(health[0], "hull-http:cove-baseline:health@50", "{health:?}");
        assert_eq!(health[1], "hull-http:cove-lua:health@50", "{health:?}");
        assert!(has("hull-http:cove-baseline:echo@50"));
        assert!(!has("hull-http:cove-baseline:insert@50"));
        assert!(!has("sqlite:cove-baseline:read@50"));
        assert!(has("sweep:bun:hello@200"));
        assert!(!has("sweep:deno:hello@1"));
        assert!(has("multi:bun-2w:json@50"));
        assert!(has("multi:cove-lua-2w:json@50"));
        assert!(!has("hello:bun-2w:json@50"));
        // The template table: Cove's template app only, and nothing else on it.
        let tpl: Vec<&String> = ids.iter().filter(|i| i.starts_with("templates:")).collect();
        assert_eq!(tpl.len(), 8, "{tpl:?}");
        assert!(has("templates:cove-lua-tpl:tpl-health@50"));
        assert!(has("templates:cove-js-tpl:tpl-full@50"));
        assert!(tpl
            .iter()
            .all(|i| i.contains(":cove-lua-tpl:") || i.contains(":cove-js-tpl:")));
        assert!(ids
            .iter()
            .filter(|i| i.contains("-tpl:"))
            .all(|i| i.starts_with("templates:")));
        // The JavaScript app gets the rows the Lua app has.
        for table in TABLES.map(Table::key) {
            let lua: Vec<String> = ids
                .iter()
                .filter(|i| i.starts_with(&format!("{table}:cove-lua")))
                .map(|i| i.replacen(":cove-lua", ":cove-js", 1))
                .collect();
            assert!(!lua.is_empty(), "{table}");
            assert!(lua.iter().all(|id| has(id)), "{table}: {lua:?}");
        }
        assert!(has("sweep:cove-js:hello@200"));
        // The database tables: Cove's pg app and the database peers, one
        // and two workers, and nothing else.
        for id in [
            "pg:cove-lua-pg:read@50",
            "pg:cove-lua-pg-2w:write@50",
            "pg:cove-js-pg:read@50",
            "pg:go-pgx:read@50",
            "pg:go-pgx-2w:write@50",
            "redis:cove-lua-pg:get-incr@50",
            "redis:go-pgx-2w:get-incr@50",
        ] {
            assert!(has(id), "{id}: {ids:?}");
        }
        let db: Vec<&String> = ids
            .iter()
            .filter(|i| i.starts_with("pg:") || i.starts_with("redis:"))
            .collect();
        assert_eq!(db.len(), 6 * 3, "{db:?}");
        assert!(ids
            .iter()
            .filter(|i| i.contains("-pg:") || i.contains("-pg-2w:") || i.contains(":go-pgx"))
            .all(|i| i.starts_with("pg:") || i.starts_with("redis:")));
    }

    #[test]
    fn protocol_tables_have_their_own_servers() {
        let c = cfg();
        let mut s = servers();
        let dir = Path::new("/tmp/peers");
        for (name, groups) in [
            ("go-tls", vec![Group::Tls, Group::H2]),
            ("bun-tls", vec![Group::Tls]),
            ("node-http2", vec![Group::H2]),
            ("hyper-h2c", vec![Group::H2c]),
        ] {
            s.extend(peer_servers(&c, &peer(name, groups, false), dir));
        }
        let ids: Vec<String> = measurements(&s, 50, &[]).iter().map(|m| m.id(&s)).collect();
        let of = |table: &str| -> Vec<&str> {
            let mut v: Vec<&str> = ids
                .iter()
                .filter(|i| i.starts_with(table) && i.ends_with(":json@50"))
                .map(|i| i.split(':').nth(1).unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            of("tls:"),
            ["bun-tls", "cove-js-tls", "cove-lua-tls", "go-tls"]
        );
        assert_eq!(
            of("h2:"),
            [
                "cove-js-h2c",
                "cove-js-tls",
                "cove-lua-h2c",
                "cove-lua-tls",
                "go-tls",
                "hyper-h2c",
                "node-http2"
            ]
        );
        // Their servers are in no other table, and the others' not in theirs.
        for i in &ids {
            let proto = ["-tls:", "-h2c:", "-http2:"].iter().any(|p| i.contains(p));
            let table = i.starts_with("tls:") || i.starts_with("h2:");
            assert_eq!(proto, table, "{i}");
        }
        assert!(ids.iter().any(|i| i == "tls:cove-lua-tls:hello@50"));
        let find = |key: &str| s.iter().find(|d| d.key == key).unwrap();
        assert!(find("cove-lua-tls").wants_cert() && find("node-http2").wants_cert());
        assert!(!find("cove-lua-h2c").wants_cert() && !find("cove-lua").wants_cert());
        let h2c = &find("cove-js-h2c").launch.args;
        assert_eq!(h2c[0], "--h2c");
        assert!(h2c.last().unwrap().to_string_lossy().ends_with("app.js"));
        // `--only tls:` keeps its rows and the baseline's.
        let m = measurements(&s, 50, &["tls:".to_string()]);
        let only: Vec<String> = m.iter().map(|m| m.id(&s)).collect();
        assert!(only
            .iter()
            .all(|i| i.starts_with("tls:") || i.starts_with("hello:cove-baseline:")));
        assert_eq!(only.iter().filter(|i| i.starts_with("tls:")).count(), 8);
    }

    #[test]
    fn the_ws_table_has_its_own_servers() {
        let c = cfg();
        let mut s = servers();
        let dir = Path::new("/tmp/peers");
        s.extend(peer_servers(
            &c,
            &peer("bun-ws", vec![Group::Ws], false),
            dir,
        ));
        let ids: Vec<String> = measurements(&s, 50, &[]).iter().map(|m| m.id(&s)).collect();
        let ws: Vec<&String> = ids.iter().filter(|i| i.starts_with("ws:")).collect();
        assert_eq!(
            ws,
            [
                "ws:cove-lua-ws:echo@50",
                "ws:cove-js-ws:echo@50",
                "ws:bun-ws:echo@50",
                "ws:cove-lua-ws:broadcast@1000",
                "ws:cove-js-ws:broadcast@1000",
                "ws:bun-ws:broadcast@1000"
            ]
        );
        // Their servers are in no other table.
        assert!(ids
            .iter()
            .filter(|i| i.contains("-ws:"))
            .all(|i| i.starts_with("ws:")));
        let find = |key: &str| s.iter().find(|d| d.key == key).unwrap();
        let lua = find("cove-lua-ws");
        assert_eq!((lua.label.as_str(), lua.workers), ("Cove (Lua)", 1));
        assert!(lua
            .launch
            .args
            .last()
            .unwrap()
            .to_string_lossy()
            .ends_with("bench/apps/ws/app.lua"));
        // `--only ws:` measures nothing else: no baseline rows either.
        let only: Vec<String> = measurements(&s, 50, &["ws:".to_string()])
            .iter()
            .map(|m| m.id(&s))
            .collect();
        assert_eq!(only.len(), 6, "{only:?}");
        assert!(only.iter().all(|i| i.starts_with("ws:")));
        // With another table the baseline comes back.
        let both: Vec<String> = measurements(&s, 50, &["ws:".into(), "tls:".into()])
            .iter()
            .map(|m| m.id(&s))
            .collect();
        assert!(both.iter().any(|i| i == "hello:cove-baseline:json@50"));
    }

    #[test]
    fn table_patterns_match_from_the_start() {
        assert!(only_matches("pg:cove-lua-pg:read@50", "pg:"));
        assert!(!only_matches("redis:cove-lua-pg:get-incr@50", "pg:"));
        assert!(!only_matches("pg:node-pg:read@50", "redis:"));
        assert!(only_matches(
            "redis:cove-lua-pg:get-incr@50",
            ":cove-lua-pg:"
        ));
        assert!(only_matches("hello:bun:json@50", "hello:"));
        assert!(only_matches("sweep:bun:hello@200", "@200"));
        assert!(!only_matches("sweep:bun:hello@200", "hello:"));
    }

    #[test]
    fn table_patterns_limit_the_peers_to_install() {
        let only = |v: &[&str]| only_groups(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            only(&["pg:", "redis:"]),
            Some(vec![Group::Pg, Group::Redis])
        );
        assert_eq!(
            only(&["hull-http:cove-lua:"]),
            Some(vec![Group::Http, Group::Sqlite])
        );
        assert_eq!(only(&["pg:", ":bun:"]), None);
        assert_eq!(
            only(&["tls:", "h2:"]),
            Some(vec![Group::Tls, Group::H2, Group::H2c])
        );
        assert_eq!(only(&["@200"]), None);
        assert_eq!(only(&[]), None);
    }

    #[test]
    fn cove_pg_app_runs_with_one_and_two_workers() {
        let s = servers();
        let find = |key: &str| s.iter().find(|d| d.key == key).unwrap();
        for (key, workers, app) in [
            ("cove-lua-pg", 1, "bench/apps/pg/app.lua"),
            ("cove-lua-pg-2w", 2, "bench/apps/pg/app.lua"),
            ("cove-js-pg-2w", 2, "bench/apps/pg/app.js"),
        ] {
            let d = find(key);
            assert_eq!(d.workers, workers, "{key}");
            assert_eq!(d.kind, Kind::Cove);
            assert!(d
                .launch
                .args
                .last()
                .unwrap()
                .to_string_lossy()
                .ends_with(app));
            assert_eq!(d.pool[0], (Group::Pg, COVE_PG_POOL.to_string()));
            assert_eq!(d.groups, [Group::Pg, Group::Redis]);
        }
        assert_eq!(find("cove-js-pg").label, "Cove (JS)");
        assert_eq!(find("go-pgx").pool[0].1, "pgxpool MaxConns 10");
        assert!(find("cove-lua").pool.is_empty());
        let m = measurements(&s, 50, &["pg:".to_string()]);
        let ids: Vec<String> = m.iter().map(|m| m.id(&s)).collect();
        assert!(ids
            .iter()
            .all(|i| i.starts_with("pg:") || i.starts_with("hello:cove-baseline:")));
        assert_eq!(ids.iter().filter(|i| i.starts_with("pg:")).count(), 12);
    }

    #[test]
    fn only_keeps_the_baseline() {
        let s = servers();
        let m = measurements(&s, 50, &["sqlite:".to_string()]);
        let ids: Vec<String> = m.iter().map(|m| m.id(&s)).collect();
        assert!(ids
            .iter()
            .all(|i| i.starts_with("sqlite:") || i.starts_with("hello:cove-baseline:")));
        assert!(ids.iter().any(|i| i == "hello:cove-baseline:json@50"));
        // Its Hull rows come with the apps' rows they divide.
        let h = measurements(&s, 50, &["hull-http:cove-lua:greet".to_string()]);
        let ids: Vec<String> = h.iter().map(|m| m.id(&s)).collect();
        assert!(ids.iter().any(|i| i == "hull-http:cove-baseline:greet@50"));
        assert!(ids
            .iter()
            .any(|i| i == "hull-http:cove-baseline:greet-post@50"));
        assert!(!ids.iter().any(|i| i == "hull-http:cove-baseline:health@50"));
        let t = measurements(&s, 50, &["templates:".to_string()]);
        let ids: Vec<String> = t.iter().map(|m| m.id(&s)).collect();
        assert_eq!(
            ids.iter().filter(|i| i.starts_with("templates:")).count(),
            8
        );
    }
}
