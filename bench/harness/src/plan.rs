//! Which servers run and which (table, server, workload, connections)
//! measurements a run makes.

use std::ffi::OsString;
use std::path::Path;

use crate::peers::{self, PeerSpec};
use crate::servers::Launch;
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
}

impl ServerDef {
    pub fn is_cove(&self) -> bool {
        self.kind != Kind::Peer
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
    }
}

fn cores(cfg: &Config, workers: u32) -> String {
    if workers > 1 {
        format!("{},{}", cfg.server_core, cfg.wrk_core)
    } else {
        cfg.server_core.to_string()
    }
}

/// Cove's servers: the baseline, then per runtime (Lua, JavaScript) the app
/// on 1 and 2 workers and the app with group commit off (a reference for
/// the write rows), then per runtime the template app.
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
    }
}

/// Every measurement `--only` selects (each pattern a substring of the
/// measurement's id; none = all). The baseline's Hello rows are always
/// kept: every CPU ratio divides by them; so is its row of any other
/// workload that is measured.
pub fn measurements(servers: &[ServerDef], connections: u32, only: &[String]) -> Vec<Measurement> {
    let mut out = Vec::new();
    for table in TABLES {
        for w in table.workloads() {
            for &c in table.connections() {
                for (i, s) in servers.iter().enumerate() {
                    if in_table(table, s) && s.groups.contains(&w.group) {
                        out.push(Measurement {
                            table,
                            server: i,
                            workload: w,
                            connections: c.unwrap_or(connections),
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
            only.is_empty() || only.iter().any(|o| id.contains(o.as_str()))
        })
        .collect();
    let measured = |m: &Measurement| {
        out.iter()
            .zip(&picked)
            .any(|(o, &p)| p && o.table == m.table && o.workload.name == m.workload.name)
    };
    let keep: Vec<bool> = out
        .iter()
        .zip(&picked)
        .map(|(m, &p)| {
            let raw = servers[m.server].kind == Kind::Baseline;
            p || raw && (m.table == Table::Hello || measured(m))
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
        }
    }

    fn servers() -> Vec<ServerDef> {
        let c = cfg();
        let mut s = cove_servers(&c);
        let dir = Path::new("/tmp/peers");
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
                "bun",
                "bun-2w",
                "deno"
            ]
        );
        let bun2 = &s[10];
        assert_eq!(bun2.launch.cores, "0,1");
        assert!(bun2.launch.env.contains(&("WORKERS".into(), "2".into())));
        assert_eq!(bun2.launch.program, PathBuf::from("/tmp/peers/bun/./run"));
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
