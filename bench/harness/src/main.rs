//! cove-bench: Cove and its peers on the same machine. See `bench/run --help`.

mod cert;
mod charts;
mod h2load;
mod instructions;
mod machine;
mod peers;
mod plan;
mod procstat;
mod progress;
mod report;
mod report_json;
mod report_proto;
mod report_ws;
mod runner;
mod servers;
mod services;
mod stats;
mod stress;
mod summary;
mod svg;
mod targets;
mod wire;
mod workloads;
mod wrk;
mod wsclient;
mod wsload;
mod wsproto;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use progress::Progress;

#[derive(Debug, Clone)]
pub struct Config {
    pub rounds: usize,
    pub seconds: u64,
    pub warmup: u64,
    pub connections: u32,
    /// Substrings of `table:server:workload@connections` ids; none = all.
    pub only: Vec<String>,
    /// Peer names to run (none = every installed peer).
    pub peers: Vec<String>,
    pub no_peers: bool,
    pub skip_install: bool,
    pub instructions: bool,
    /// Requests per route in `--instructions` mode (the large run sends 10×).
    pub instr_requests: u64,
    pub cove: PathBuf,
    /// The Lua app (also what `--instructions` measures).
    pub app: PathBuf,
    /// The JavaScript twin of `app`.
    pub js_app: PathBuf,
    /// The template app's folder (app.lua and app.js): the templates table.
    pub templates: PathBuf,
    /// The PostgreSQL + Redis app's folder (app.lua and app.js): the pg and
    /// redis tables.
    pub pg_app: PathBuf,
    /// The WebSocket app's folder (app.lua and app.js): the ws table.
    pub ws_app: PathBuf,
    pub root: PathBuf,
    pub out_dir: PathBuf,
    pub server_core: u32,
    pub wrk_core: u32,
    /// Redo a run when other processes used more than this % of a core.
    pub noise_pct: f64,
    /// How many times a noisy run is redone at most (the last one is kept).
    pub redos: u32,
    pub quick: bool,
    /// `--stress`: the abuse probes of tools/stress instead of the benchmark.
    pub stress: bool,
}

const HELP: &str = "\
cove-bench: Cove and its peers on the same machine (run it through bench/run)

Installs the peer servers of bench/peers/ into bench/.peers/, starts Cove
(its scriptless baseline, the Lua and the JavaScript app of
bench/apps/hello/, of bench/apps/templates/ for the template table and of
bench/apps/pg/ for the pg and redis tables, which also get one private
PostgreSQL and one Redis server, shared by every contender) and
every peer in its single-worker configuration pinned to core 0 (plus
two-worker variants on both cores), checks every route's response, then
drives them with wrk (-t1, pinned to core 1) in interleaved rounds. Reports
req/s, p50/p99, server CPU-µs per request (whole process tree, from /proc),
the CPU ratio to the raw baseline (template routes also to their own
/health), memory and size.
Writes bench/results/latest.md, latest.json and SVG charts; a full run (no
--quick, no --only) also updates docs/benchmarks.md.

Options:
  --quick            1 round × 2 s (warm-up 1 s) instead of 3 × 5 s (2 s)
  --rounds N         number of interleaved rounds
  --duration S       seconds per wrk run
  --warmup S         warm-up seconds per measurement (0 = none)
  --connections N    wrk connections (default 50; the sweep uses 1, 10, 50, 200)
  --redo N           redo a run during which other processes used more than
                     10% of a core up to N times (default 1; the last is kept)
  --only PATTERN     only measurements whose id `table:server:workload@conns`
                     contains PATTERN (repeatable; a PATTERN starting with a
                     table and `:` matches from the start). Tables: hello
                     routing hull-http sqlite sweep multi templates pg redis
                     tls h2 (HTTPS with wrk, HTTP/2 with h2load: a
                     self-signed certificate is made for the run) ws
                     (WebSocket echo and broadcast, cove-bench's own client:
                     `cove-bench --ws-client echo|broadcast --url ws://...`).
                     E.g. --only hello: --only :cove-lua: --only @200 --only
                     templates: (also filters --instructions, on
                     table:server:workload). With table patterns only, only
                     the peers serving those tables are installed
                     (--only pg: --only redis: starts a private PostgreSQL
                     and Redis for them)
  --peers a,b        only these peers (names from bench/peers/*/peer.json)
  --no-peers         Cove only
  --skip-install     use bench/.peers as it is; do not run install scripts
  --instructions     deterministic mode: user-space instructions per request
                     under valgrind (N and 10·N requests) of the baseline,
                     the Lua app's Hull HTTP routes and the template table
                     in both runtimes
  --requests N       N for --instructions (default 2000)
  --stress           the abuse probes instead (tools/stress runs them): slow
                     clients, 1,000 connections for --duration seconds,
                     the file-descriptor limit, runaway handlers; one line
                     per probe with its figure
  --cove PATH        cove binary (default: next to cove-bench); bench/run
                     --pgo builds tools/build-pgo's and passes it here
  --app PATH         Lua app (default: bench/apps/hello/app.lua), also the
                     one --instructions measures the Hull HTTP routes of
  --js-app PATH      JavaScript app (default: bench/apps/hello/app.js)
  --out DIR          results directory (default: bench/results)
  -h, --help         this text";

pub fn parse_args(args: &[String]) -> Result<Option<Config>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let exe_dir = std::env::current_exe()?
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut cfg = Config {
        rounds: 3,
        seconds: 5,
        warmup: 2,
        connections: 50,
        only: Vec::new(),
        peers: Vec::new(),
        no_peers: false,
        skip_install: false,
        instructions: false,
        instr_requests: 2000,
        cove: exe_dir.join("cove"),
        app: root.join("bench/apps/hello/app.lua"),
        js_app: root.join("bench/apps/hello/app.js"),
        templates: root.join("bench/apps/templates"),
        pg_app: root.join("bench/apps/pg"),
        ws_app: root.join("bench/apps/ws"),
        out_dir: root.join("bench/results"),
        root,
        server_core: 0,
        wrk_core: 1,
        noise_pct: 10.0,
        redos: 1,
        quick: false,
        stress: false,
    };
    let (mut rounds, mut seconds, mut warmup) = (None, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .with_context(|| format!("{name} needs a value"))
        };
        let number = |v: String, name: &str| -> Result<u64> {
            v.parse()
                .with_context(|| format!("{name}: {v:?} is not a number"))
        };
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--quick" => cfg.quick = true,
            "--rounds" => rounds = Some(number(value(a)?, a)? as usize),
            "--duration" => seconds = Some(number(value(a)?, a)?),
            "--warmup" => warmup = Some(number(value(a)?, a)?),
            "--connections" => cfg.connections = number(value(a)?, a)? as u32,
            "--redo" => cfg.redos = number(value(a)?, a)? as u32,
            "--only" => cfg.only.push(value(a)?),
            "--peers" => cfg
                .peers
                .extend(value(a)?.split(',').map(|s| s.trim().to_string())),
            "--no-peers" => cfg.no_peers = true,
            "--skip-install" => cfg.skip_install = true,
            "--instructions" => cfg.instructions = true,
            "--stress" => cfg.stress = true,
            "--requests" => cfg.instr_requests = number(value(a)?, a)?,
            "--cove" => cfg.cove = PathBuf::from(value(a)?),
            "--app" => cfg.app = PathBuf::from(value(a)?),
            "--js-app" => cfg.js_app = PathBuf::from(value(a)?),
            "--out" => cfg.out_dir = PathBuf::from(value(a)?),
            other => bail!("unknown argument {other:?} (see --help)"),
        }
    }
    let (r, s, w) = if cfg.quick { (1, 2, 1) } else { (3, 5, 2) };
    cfg.rounds = rounds.unwrap_or(r);
    cfg.seconds = seconds.unwrap_or(s);
    cfg.warmup = warmup.unwrap_or(w);
    if cfg.rounds == 0 || cfg.seconds == 0 || cfg.connections == 0 || cfg.instr_requests == 0 {
        bail!("--rounds, --duration, --connections and --requests must be at least 1");
    }
    Ok(Some(cfg))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The ws table's load client: this binary again, pinned to the load core.
    if args.first().map(String::as_str) == Some("--ws-client") {
        if let Err(e) = wsclient::main(&args[1..]) {
            eprintln!("cove-bench --ws-client: {e:#}");
            std::process::exit(1);
        }
        return;
    }
    let cfg = match parse_args(&args) {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            println!("{HELP}");
            return;
        }
        Err(e) => {
            eprintln!("cove-bench: {e:#}");
            std::process::exit(2);
        }
    };
    let result = if cfg.stress {
        stress::run(&cfg)
    } else if cfg.instructions {
        run_instructions(&cfg)
    } else {
        run(&cfg)
    };
    if let Err(e) = result {
        servers::remove_scratch();
        eprintln!("cove-bench: {e:#}");
        std::process::exit(1);
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The servers of this run: Cove's, then every peer that installed.
fn servers(cfg: &Config, p: &mut Progress) -> Result<(Vec<plan::ServerDef>, Vec<runner::Skipped>)> {
    let mut defs = plan::cove_servers(cfg);
    let mut skipped = Vec::new();
    if cfg.no_peers {
        return Ok((defs, skipped));
    }
    let peers_dir = cfg.root.join("bench/peers");
    let install_dir = cfg.root.join("bench/.peers");
    let mut specs = peers::load_all(&peers_dir)?;
    for want in &cfg.peers {
        if !specs.iter().any(|s| &s.name == want) {
            bail!("--peers: no peer named {want:?} in {}", peers_dir.display());
        }
    }
    if !cfg.peers.is_empty() {
        specs.retain(|s| cfg.peers.contains(&s.name));
    }
    // `--only pg:`: only the peers that serve one of the tables' groups.
    if let Some(groups) = plan::only_groups(&cfg.only) {
        specs.retain(|s| s.groups.iter().any(|g| groups.contains(g)));
    }
    let mut folders: Vec<String> = specs.iter().map(|s| s.folder.clone()).collect();
    folders.dedup();
    let failed: Vec<peers::Installed> = if cfg.skip_install {
        Vec::new()
    } else {
        let done = peers::install_all(&peers_dir, &install_dir, &folders, &|m| p.show(m))?;
        done.into_iter().filter(|i| !i.ok).collect()
    };
    for f in &failed {
        p.note(&format!(
            "peer folder {} not installed: {}",
            f.folder, f.reason
        ));
    }
    for spec in &specs {
        match failed.iter().find(|f| f.folder == spec.folder) {
            Some(f) => skipped.push((spec.name.clone(), f.reason.clone())),
            None => defs.extend(plan::peer_servers(cfg, spec, &install_dir)),
        }
    }
    Ok((defs, skipped))
}

/// Start the database servers the plan's `pg` and `redis` rows need; the
/// rows of a server that does not start are left out, with the reason.
fn with_databases(
    cfg: &Config,
    plan: Vec<plan::Measurement>,
    mut skipped: Vec<runner::Skipped>,
    p: &mut Progress,
) -> (
    Vec<plan::Measurement>,
    services::Services,
    Vec<runner::Skipped>,
) {
    let needs = |t: workloads::Table| plan.iter().any(|m| m.table == t);
    let (pg, redis) = (needs(workloads::Table::Pg), needs(workloads::Table::Redis));
    if !pg && !redis {
        return (plan, services::Services::default(), skipped);
    }
    p.show("starting PostgreSQL and Redis for the pg and redis tables");
    let svc = services::Services::start(pg, redis, cfg.wrk_core);
    for (table, why) in &svc.missing {
        p.note(&format!("{} table not measured: {why}", table.key()));
        skipped.push((format!("the {} table", table.key()), why.clone()));
    }
    let plan = plan
        .into_iter()
        .filter(|m| !svc.missing.iter().any(|(t, _)| *t == m.table))
        .collect();
    (plan, svc, skipped)
}

fn run(cfg: &Config) -> Result<()> {
    if !cfg.cove.is_file() {
        bail!(
            "{} not found; build it with `cargo build --release -p cove`",
            cfg.cove.display()
        );
    }
    servers::install_signal_handler()?;
    // The ws table's thousand connections; the servers inherit the limit.
    wsclient::raise_fd_limit();
    let mut p = Progress::new();
    let machine = machine::Machine::detect(cfg)?;
    let (mut defs, skipped) = servers(cfg, &mut p)?;
    for d in defs.iter_mut().filter(|d| d.version.is_empty()) {
        d.version = machine.cove.clone();
    }
    let plan = plan::measurements(&defs, cfg.connections, &cfg.only);
    if plan
        .iter()
        .all(|m| defs[m.server].kind == plan::Kind::Baseline)
        && !cfg.only.is_empty()
    {
        bail!("--only {:?} matches no measurement", cfg.only);
    }
    let (plan, svc, mut skipped) = with_databases(cfg, plan, skipped, &mut p);
    let result = runner::run(cfg, defs, plan, machine.clk_tck, &mut p, &svc);
    services::stop_all();
    let mut result = result?;
    skipped.append(&mut result.skipped);
    result.skipped = skipped;
    p.finish();
    let md = report::markdown(cfg, &machine, &result);
    println!("{md}");
    std::fs::create_dir_all(&cfg.out_dir)?;
    write(&cfg.out_dir.join("latest.md"), &md)?;
    let json = report_json::json(cfg, &machine, &result);
    write(
        &cfg.out_dir.join("latest.json"),
        &(serde_json::to_string_pretty(&json)? + "\n"),
    )?;
    let charts = charts::write_all(&result, &cfg.out_dir)?;
    eprintln!(
        "wrote {}/latest.md, latest.json and {charts} charts",
        cfg.out_dir.display()
    );
    if !cfg.quick && cfg.only.is_empty() && cfg.peers.is_empty() && !cfg.no_peers {
        let docs = cfg.root.join("docs/benchmarks.md");
        charts::update_docs(&docs, &md, &cfg.out_dir)?;
        eprintln!("updated {}", docs.display());
    }
    Ok(())
}

/// What `--instructions` measures: the baseline, the hello app's Hull
/// HTTP routes (Lua and JS), and the template table in both runtimes, filtered by
/// `--only` on `table:server:workload` (a template route keeps its
/// runtime's `/health`, the denominator of its ratio).
fn instruction_jobs(cfg: &Config) -> Vec<instructions::Job> {
    let route = |w: &workloads::Workload| instructions::Route {
        name: w.name.to_string(),
        method: w.method.to_string(),
        path: w.path.to_string(),
        body: w.body.map(String::from),
    };
    let mut candidates: Vec<(String, instructions::Job)> = Vec::new();
    for (server, app) in [("cove-lua", &cfg.app), ("cove-js", &cfg.js_app)] {
        for w in ["health", "greet", "echo", "insert", "select20"]
            .iter()
            .filter_map(|n| workloads::workload(n))
        {
            let job = instructions::Job {
                server: server.to_string(),
                app: Some(app.clone()),
                seed: Some(instructions::SEED),
                route: route(w),
            };
            candidates.push((format!("hull-http:{server}:{}", w.name), job));
        }
    }
    let table = workloads::Table::Templates;
    for lang in ["lua", "js"] {
        let server = format!("cove-{lang}-tpl");
        for w in table.workloads() {
            let job = instructions::Job {
                server: server.clone(),
                app: Some(cfg.templates.join(format!("app.{lang}"))),
                seed: None,
                route: route(w),
            };
            candidates.push((format!("{}:{server}:{}", table.key(), w.name), job));
        }
    }
    let picked = |id: &str| cfg.only.is_empty() || cfg.only.iter().any(|o| id.contains(o.as_str()));
    let mut jobs = vec![instructions::Job::baseline()];
    for (id, job) in &candidates {
        let reference = table.reference() == Some(job.route.name.as_str())
            && candidates
                .iter()
                .any(|(other, j)| j.server == job.server && picked(other));
        if picked(id) || reference {
            jobs.push(job.clone());
        }
    }
    jobs
}

fn run_instructions(cfg: &Config) -> Result<()> {
    if !cfg.cove.is_file() {
        bail!(
            "{} not found; build it with `cargo build --release -p cove`",
            cfg.cove.display()
        );
    }
    servers::install_signal_handler()?;
    let p = Progress::new();
    let jobs = instruction_jobs(cfg);
    if jobs.len() == 1 {
        bail!("--only {:?} matches no route of --instructions", cfg.only);
    }
    let counts = instructions::measure(&cfg.cove, &jobs, cfg.instr_requests, &|m| p.status(m))?;
    p.finish();
    let md = instructions::markdown(&counts);
    println!("{md}");
    std::fs::create_dir_all(&cfg.out_dir)?;
    write(&cfg.out_dir.join("instructions.md"), &md)?;
    eprintln!("wrote {}/instructions.md", cfg.out_dir.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn defaults_and_quick() {
        let c = parse_args(&[]).unwrap().unwrap();
        assert_eq!(
            (c.rounds, c.seconds, c.warmup, c.connections),
            (3, 5, 2, 50)
        );
        let q = parse_args(&args("--quick --rounds 4")).unwrap().unwrap();
        assert_eq!((q.rounds, q.seconds, q.warmup), (4, 2, 1));
        assert!(parse_args(&args("--help")).unwrap().is_none());
        assert!(parse_args(&args("--bogus")).is_err());
        assert!(parse_args(&args("--rounds")).is_err());
        assert!(parse_args(&args("--rounds 0")).is_err());
        assert_eq!(c.redos, 1);
        assert_eq!(parse_args(&args("--redo 3")).unwrap().unwrap().redos, 3);
        assert!(c.app.ends_with("bench/apps/hello/app.lua"));
        assert!(c.js_app.ends_with("bench/apps/hello/app.js"));
        assert!(
            c.app.is_file() && c.js_app.is_file(),
            "the default apps exist"
        );
        let j = parse_args(&args("--js-app /tmp/x.js")).unwrap().unwrap();
        assert_eq!(j.js_app, PathBuf::from("/tmp/x.js"));
    }

    #[test]
    fn repeatable_filters() {
        let c = parse_args(&args(
            "--only hello: --only @200 --peers bun,go --skip-install",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(c.only, ["hello:", "@200"]);
        assert_eq!(c.peers, ["bun", "go"]);
        assert!(c.skip_install);
        let i = parse_args(&args("--instructions --requests 100"))
            .unwrap()
            .unwrap();
        assert!(i.instructions);
        assert_eq!(i.instr_requests, 100);
    }

    #[test]
    fn instruction_jobs_follow_only() {
        let ids = |a: &str| -> Vec<String> {
            let c = parse_args(&args(a)).unwrap().unwrap();
            instruction_jobs(&c)
                .iter()
                .map(|j| format!("{}:{}", j.server, j.route.name))
                .collect()
        };
        let all = ids("--instructions");
        assert_eq!(all.len(), 1 + 10 + 8);
        assert!(all.contains(&"cove-js:select20".to_string()));
        assert_eq!(all[0], "cove-baseline:baseline");
        assert_eq!(all[1], "cove-lua:health");
        assert!(all.contains(&"cove-js-tpl:tpl-full".to_string()));
        // A template route brings its runtime's /health; the baseline stays.
        assert_eq!(
            ids("--instructions --only :cove-js-tpl:tpl-full"),
            [
                "cove-baseline:baseline",
                "cove-js-tpl:tpl-health",
                "cove-js-tpl:tpl-full"
            ]
        );
        assert_eq!(ids("--instructions --only templates:").len(), 1 + 8);
        assert_eq!(ids("--instructions --only hull-http:").len(), 1 + 10);
        assert_eq!(
            ids("--instructions --only hull-http:cove-lua:").len(),
            1 + 5
        );
        let c = parse_args(&args("--only nothing")).unwrap().unwrap();
        assert_eq!(instruction_jobs(&c).len(), 1);
        assert!(c.templates.join("app.lua").is_file() && c.templates.join("app.js").is_file());
    }
}
