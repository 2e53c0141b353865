//! The measurement loop: start and check the servers, warm up every
//! measurement, then interleaved rounds (A B C … A B C …) with CPU
//! accounting per run, and memory before and after.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::cert::{self, CertPair};
use crate::plan::{Kind, Measurement, ServerDef};
use crate::procstat::{read_pid, read_totals, tree_rss_kib, tree_ticks};
use crate::progress::Progress;
use crate::servers::{self, free_port, Server};
use crate::services::Services;
use crate::wire::Wire;
use crate::workloads::{wrk_script, Group, Table, Workload};
use crate::wrk::{self, Load, WrkResult};
use crate::Config;

/// One wrk run with the server's CPU over the same window.
#[derive(Debug, Clone)]
pub struct Sample {
    pub round: usize,
    pub wrk: WrkResult,
    pub server_ticks: u64,
    pub cpu_us_per_req: f64,
    /// The database server's tree over the same window (`pg`, `redis` tables).
    pub db_ticks: Option<u64>,
    pub db_cpu_us_per_req: Option<f64>,
    /// CPU used by everything but the server, the database servers, wrk and
    /// the harness, in % of one core.
    pub other_cpu_pct: f64,
    pub wall_s: f64,
    /// The `ws` table's load client's own CPU over its window, in % of
    /// its core (near 100: the client, not the server, is the limit).
    pub client_cpu_pct: Option<f64>,
}

/// A measurement with its samples.
#[derive(Debug)]
pub struct Cell {
    pub m: Measurement,
    /// One accepted sample per round, in round order.
    pub samples: Vec<Sample>,
    /// Runs thrown away because other processes were busy (then redone).
    pub discarded: Vec<Sample>,
}

/// Memory of one server: idle after start, and peak over the whole run (KiB).
#[derive(Debug, Clone, Copy, Default)]
pub struct Memory {
    pub idle_kib: u64,
    pub peak_kib: u64,
}

/// What was left out, and why.
pub type Skipped = (String, String);

/// Everything one invocation measured.
#[derive(Debug)]
pub struct Run {
    pub servers: Vec<ServerDef>,
    pub cells: Vec<Cell>,
    pub memory: BTreeMap<String, Memory>,
    /// Servers or measurements left out, with the reason.
    pub skipped: Vec<Skipped>,
    /// CPU used by other processes during 1 s of idle servers before the
    /// warm-up, in % of one core.
    pub background_pct: Option<f64>,
    /// The database servers the `pg` and `redis` tables used, described.
    pub databases: Vec<(Table, String)>,
}

/// Which database server a measurement's CPU is read from, and every
/// database server (their CPU is not "other processes").
#[derive(Debug, Clone, Copy, Default)]
struct DbTrees<'a> {
    this: Option<u32>,
    all: &'a [u32],
}

/// Seconds a run costs beyond wrk's duration (process start, /proc reads).
const PER_RUN: f64 = 0.3;

fn dbs_ticks(trees: &DbTrees) -> Vec<u64> {
    trees.all.iter().map(|&pid| tree_ticks(pid)).collect()
}

fn measure(
    cfg: &Config,
    server: &Server,
    load: &Load,
    tck: u64,
    round: usize,
    dbs: DbTrees,
) -> Result<Sample> {
    let (d0, t0, s0, me0) = (
        dbs_ticks(&dbs),
        read_totals()?,
        tree_ticks(server.pid),
        read_pid("self")?,
    );
    let start = std::time::Instant::now();
    let (w, raw) = wrk::run(load)?;
    let wall_s = start.elapsed().as_secs_f64();
    let (t1, s1, me1, d1) = (
        read_totals()?,
        tree_ticks(server.pid),
        read_pid("self")?,
        dbs_ticks(&dbs),
    );
    // The ws client reads the server's CPU over its own window (after its
    // connections are open, before they close).
    let ws = match load.ws {
        Some(_) => Some(crate::wsclient::WsReport::parse(&raw)?),
        None => None,
    };
    let server_ticks = ws
        .as_ref()
        .and_then(|r| r.server_ticks)
        .unwrap_or(s1.saturating_sub(s0));
    let db_each: Vec<u64> = d1
        .iter()
        .zip(&d0)
        .map(|(b, a)| b.saturating_sub(*a))
        .collect();
    let db_ticks = dbs
        .this
        .and_then(|pid| dbs.all.iter().position(|&p| p == pid))
        .map(|i| db_each[i]);
    let known = s1.saturating_sub(s0)
        + db_each.iter().sum::<u64>()
        + me1.with_children().saturating_sub(me0.with_children());
    let other = t1.busy.saturating_sub(t0.busy).saturating_sub(known);
    if w.requests == 0 {
        bail!(
            "{} served no request during a {} s run",
            server.name,
            cfg.seconds
        );
    }
    let per_req = |ticks: u64| ticks as f64 * 1e6 / tck as f64 / w.requests as f64;
    Ok(Sample {
        round,
        server_ticks,
        cpu_us_per_req: per_req(server_ticks),
        db_ticks,
        db_cpu_us_per_req: db_ticks.map(per_req),
        other_cpu_pct: other as f64 * 100.0 / tck as f64 / wall_s,
        wall_s,
        wrk: w,
        client_cpu_pct: ws.map(|r| r.client_cpu_pct),
    })
}

/// % of one core used by everything but the harness over one idle second.
fn background_pct(tck: u64) -> Result<f64> {
    let (t0, me0, start) = (read_totals()?, read_pid("self")?, std::time::Instant::now());
    std::thread::sleep(Duration::from_secs(1));
    let (t1, me1) = (read_totals()?, read_pid("self")?);
    let mine = me1.with_children().saturating_sub(me0.with_children());
    let other = t1.busy.saturating_sub(t0.busy).saturating_sub(mine);
    Ok(other as f64 * 100.0 / tck as f64 / start.elapsed().as_secs_f64())
}

fn start_one(
    def: &ServerDef,
    dir: &Path,
    svc: &Services,
    cert: Option<&CertPair>,
) -> Result<Server> {
    let cert = match cert {
        Some(c) if def.wants_cert() => Some(c),
        None if def.wants_cert() => bail!("{} needs the run's certificate", def.key),
        _ => None,
    };
    let port = free_port()?;
    let mut launch = def.launch.clone();
    let db = dir.join(format!("{}.db", def.key));
    let pg = svc.pg.as_ref().filter(|_| def.groups.contains(&Group::Pg));
    let redis = svc
        .redis
        .as_ref()
        .filter(|_| def.groups.contains(&Group::Redis));
    if def.port_flag {
        let mut args: Vec<OsString> = launch.args.clone();
        // The subcommand (if any) stays first; the app path stays last.
        let at = usize::from(def.kind == Kind::Baseline);
        let mut flags: Vec<OsString> = vec!["-p".into(), port.to_string().into()];
        if def.kind == Kind::Cove {
            match pg {
                Some(pg) => flags.extend(["--db".into(), pg.url.clone().into()]),
                None => flags.extend(["-d".into(), db.clone().into()]),
            }
            if let Some(r) = redis {
                flags.extend(["--kv".into(), r.url.clone().into()]);
            }
            if def.observed {
                flags.extend([
                    "--metrics".into(),
                    "127.0.0.1:0".into(),
                    "--access-log".into(),
                    dir.join(format!("{}.access.log", def.key)).into(),
                    "--access-log-format".into(),
                    "json".into(),
                ]);
            }
            if let Some(c) = cert {
                flags.extend([
                    "--tls-cert".into(),
                    c.cert.clone().into(),
                    "--tls-key".into(),
                    c.key.clone().into(),
                ]);
            }
        }
        args.splice(at..at, flags);
        launch.args = args;
    } else {
        launch.env.push(("PORT".into(), port.to_string()));
        // Only the SQLite peers get a file: the database peers would open
        // (and seed) one for nothing.
        if def.groups.contains(&Group::Sqlite) {
            launch.env.push(("DB".into(), db.to_string_lossy().into()));
        }
        if let Some(pg) = pg {
            launch.env.push(("PG_URL".into(), pg.url.clone()));
        }
        if let Some(r) = redis {
            launch.env.push(("REDIS_URL".into(), r.url.clone()));
        }
        if let Some(c) = cert {
            launch
                .env
                .push(("TLS_CERT".into(), c.cert.to_string_lossy().into()));
            launch
                .env
                .push(("TLS_KEY".into(), c.key.to_string_lossy().into()));
        }
    }
    let log = dir.join(format!("{}.log", def.key));
    let wire = Wire::of_server(&def.groups);
    let server = Server::start_over(&def.key, &launch, port, &log, Duration::from_secs(60), wire)?;
    // /visits must return 20 rows: seed them before any check.
    if def.groups.contains(&Group::Sqlite) {
        for _ in 0..25 {
            server.check("GET", "/", None, 200, "\"message\"")?;
        }
    }
    Ok(server)
}

/// What `cove baseline` answers to every request but `GET /hello`.
const BASELINE_JSON: &str = r#""message":"Hello, World!""#;

/// Check a workload's answer over `wire`, the protocol it is measured on.
fn check(server: &Server, w: &Workload, kind: Kind, wire: Wire) -> Result<()> {
    if w.group == Group::Ws {
        return crate::wsload::check(&server.addr, w)
            .with_context(|| format!("{} WebSocket {}", server.name, w.path));
    }
    if kind == Kind::Baseline && !w.text {
        return server.check_over(wire, w.method, w.path, w.body, 200, BASELINE_JSON);
    }
    if w.rotate.is_empty() {
        return server.check_over(wire, w.method, &w.check_path(), w.body, 200, w.expect);
    }
    for &(path, status, expect) in w.rotate {
        server.check_over(wire, "GET", path, None, status, expect)?;
    }
    Ok(())
}

/// Start every server, check every measurement, warm up, then measure
/// `cfg.rounds` interleaved rounds. A peer that fails to start or answers
/// wrongly is skipped with its reason; Cove failing is an error.
pub fn run(
    cfg: &Config,
    defs: Vec<ServerDef>,
    plan: Vec<Measurement>,
    tck: u64,
    p: &mut Progress,
    svc: &Services,
) -> Result<Run> {
    let dir = std::env::temp_dir().join(format!("cove-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    servers::set_scratch(&dir);
    let mut skipped = Vec::new();
    let planned = |i: usize| plan.iter().any(|m| m.server == i);
    let cert = if (0..defs.len()).any(|i| planned(i) && defs[i].wants_cert()) {
        Some(cert::make(&dir)?)
    } else {
        None
    };
    let mut started: Vec<Option<Server>> = Vec::new();
    for (i, def) in defs.iter().enumerate() {
        if !planned(i) {
            started.push(None);
            continue;
        }
        p.show(&format!("starting {} ({}/{})", def.key, i + 1, defs.len()));
        match start_one(def, &dir, svc, cert.as_ref()) {
            Ok(s) => started.push(Some(s)),
            Err(e) if def.is_cove() => return Err(e),
            Err(e) => {
                skipped.push((def.key.clone(), format!("did not start: {e:#}")));
                started.push(None);
            }
        }
    }
    let mut cells: Vec<Cell> = Vec::new();
    for m in plan {
        let Some(server) = started[m.server].as_ref() else {
            continue;
        };
        let wire = Wire::of_cell(m.table, &defs[m.server].groups);
        match check(server, m.workload, defs[m.server].kind, wire) {
            Ok(()) => cells.push(Cell {
                m,
                samples: Vec::new(),
                discarded: Vec::new(),
            }),
            Err(e) if defs[m.server].is_cove() => return Err(e),
            Err(e) => skipped.push((
                format!("{} {}", defs[m.server].key, m.workload.label()),
                format!("{e:#}"),
            )),
        }
    }
    p.show("letting the servers settle (1 s)");
    std::thread::sleep(Duration::from_secs(1));
    let mut memory = BTreeMap::new();
    for (def, s) in defs.iter().zip(&started) {
        if let Some(s) = s {
            let (idle, _) = tree_rss_kib(s.pid);
            memory.insert(
                def.key.clone(),
                Memory {
                    idle_kib: idle,
                    peak_kib: 0,
                },
            );
        }
    }
    let scripts = write_scripts(&dir, &cells)?;
    let server_of = |m: &Measurement| {
        started[m.server]
            .as_ref()
            .expect("cells only for started servers")
    };
    let urls: Vec<String> = cells
        .iter()
        .map(|c| {
            let wire = Wire::of_cell(c.m.table, &defs[c.m.server].groups);
            let addr = &server_of(&c.m).addr;
            let scheme = if c.m.table == Table::Ws {
                "ws"
            } else {
                wire.scheme()
            };
            format!("{scheme}://{addr}{}", c.m.workload.path)
        })
        .collect();
    let ws: Vec<Option<crate::wsload::WsTarget>> = cells
        .iter()
        .map(|c| {
            (c.m.table == Table::Ws).then(|| crate::wsload::WsTarget {
                broadcast: crate::wsload::is_broadcast(c.m.workload),
                server_pid: server_of(&c.m).pid,
            })
        })
        .collect();
    let conns: Vec<u32> = cells.iter().map(|c| c.m.connections).collect();
    let http2: Vec<bool> = cells.iter().map(|c| c.m.table == Table::H2).collect();
    let all_dbs = svc.roots();
    let db_of: Vec<Option<u32>> = cells
        .iter()
        .map(|c| svc.for_table(c.m.table).map(|d| d.root))
        .collect();
    let trees = |i: usize| DbTrees {
        this: db_of[i],
        all: &all_dbs,
    };
    let load = |i: usize, seconds: u64| Load {
        url: urls[i].clone(),
        seconds,
        connections: conns[i],
        core: cfg.wrk_core,
        script: scripts[i].as_deref(),
        http2: http2[i],
        ws: ws[i],
    };
    let per_round = cells.len() as f64 * (cfg.seconds as f64 + PER_RUN);
    p.add_total(
        1.0 + cells.len() as f64 * (cfg.warmup as f64 + PER_RUN) + cfg.rounds as f64 * per_round,
    );
    p.show("measuring background load (1 s)");
    let background = background_pct(tck)?;
    p.advance(1.0);
    if background > cfg.noise_pct {
        p.note(&format!(
            "warning: other processes are using {background:.0}% of a core; results may be noisy"
        ));
    }
    if cfg.warmup > 0 {
        for i in 0..cells.len() {
            p.show(&format!(
                "warm-up {} ({}/{})",
                cells[i].m.id(&defs),
                i + 1,
                cells.len()
            ));
            wrk::run(&load(i, cfg.warmup))
                .with_context(|| format!("warm-up of {}", cells[i].m.id(&defs)))?;
            p.advance(cfg.warmup as f64 + PER_RUN);
        }
    }
    for round in 1..=cfg.rounds {
        for i in 0..cells.len() {
            let id = cells[i].m.id(&defs);
            p.show(&format!(
                "round {round}/{}: {id} ({}/{})",
                cfg.rounds,
                i + 1,
                cells.len()
            ));
            let server = server_of(&cells[i].m);
            let mut s = measure(cfg, server, &load(i, cfg.seconds), tck, round, trees(i))
                .with_context(|| format!("{id} round {round}"))?;
            let mut redone = 0;
            while s.other_cpu_pct > cfg.noise_pct && redone < cfg.redos {
                redone += 1;
                p.note(&format!(
                    "{id} round {round}: other processes used {:.0}% of a core, redoing",
                    s.other_cpu_pct
                ));
                p.add_total(cfg.seconds as f64 + PER_RUN);
                let again = measure(cfg, server, &load(i, cfg.seconds), tck, round, trees(i))?;
                cells[i].discarded.push(std::mem::replace(&mut s, again));
                p.advance(cfg.seconds as f64 + PER_RUN);
            }
            cells[i].samples.push(s);
            p.advance(cfg.seconds as f64 + PER_RUN);
        }
        for s in started.iter().flatten() {
            if !s.alive() {
                bail!(
                    "server {} exited during round {round}; its log: {}",
                    s.name,
                    s.log.display()
                );
            }
        }
    }
    for (def, s) in defs.iter().zip(&started) {
        if let (Some(s), Some(mem)) = (s, memory.get_mut(&def.key)) {
            mem.peak_kib = tree_rss_kib(s.pid).1;
        }
    }
    for s in started.iter_mut().flatten() {
        s.stop()?;
    }
    drop(started);
    servers::remove_scratch();
    Ok(Run {
        servers: defs,
        cells,
        memory,
        skipped,
        background_pct: Some(background),
        databases: svc.describe(),
    })
}

/// The wrk script of each cell (POST bodies, the routing rotation).
fn write_scripts(dir: &Path, cells: &[Cell]) -> Result<Vec<Option<PathBuf>>> {
    cells
        .iter()
        .map(|c| match wrk_script(c.m.workload) {
            Some(text) => {
                let path = dir.join(format!("{}-{}.lua", c.m.table.key(), c.m.workload.name));
                std::fs::write(&path, text)?;
                Ok(Some(path))
            }
            None => Ok(None),
        })
        .collect()
}
