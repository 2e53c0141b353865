//! The measurement loop: start and check the servers, warm up every row,
//! then interleaved rounds (A B C … A B C …) with CPU accounting per run.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::procstat::{read_pid, read_totals};
use crate::rows::{Row, Srv, ECHO_BODY};
use crate::servers::{self, Server};
use crate::wrk::{self, Load, WrkResult};
use crate::Config;

/// One wrk run with the server's CPU over the same window.
#[derive(Debug, Clone)]
pub struct Sample {
    pub round: usize,
    pub wrk: WrkResult,
    pub server_ticks: u64,
    pub cpu_us_per_req: f64,
    /// CPU used by everything but the server, wrk and the harness, in % of one core.
    pub other_cpu_pct: f64,
    pub wall_s: f64,
}

#[derive(Debug)]
pub struct RowResult {
    pub row: &'static Row,
    /// One accepted sample per round, in round order.
    pub samples: Vec<Sample>,
    /// Runs thrown away because other processes were busy (then redone).
    pub discarded: Vec<Sample>,
}

/// Everything one invocation measured.
#[derive(Debug)]
pub struct Run {
    pub rows: Vec<RowResult>,
    /// CPU used by other processes during 1 s of idle servers before the
    /// warm-up, in % of one core.
    pub background_pct: Option<f64>,
}

const POST_SCRIPT: &str = "wrk.method = \"POST\"\n\
wrk.headers[\"Content-Type\"] = \"application/json\"\n";

fn post_script(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("post.lua");
    let body = format!("{POST_SCRIPT}wrk.body = '{ECHO_BODY}'\n");
    std::fs::write(&path, body)?;
    Ok(path)
}

struct Progress {
    total_s: f64,
    done_s: f64,
    started: Instant,
    tty: bool,
}

impl Progress {
    fn show(&self, what: &str) {
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = if self.done_s > 0.0 {
            elapsed / self.done_s * (self.total_s - self.done_s)
        } else {
            self.total_s
        };
        let line = format!("{what}  (ETA {:.0}s)", eta.max(0.0));
        if self.tty {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("{line}");
        }
    }
    fn finish(&self) {
        if self.tty {
            eprintln!();
        }
    }
}

fn measure(cfg: &Config, server: &Server, load: &Load, tck: u64, round: usize) -> Result<Sample> {
    let pid = server.pid.to_string();
    let (t0, s0, me0) = (read_totals()?, read_pid(&pid)?, read_pid("self")?);
    let start = Instant::now();
    let (w, _raw) = wrk::run(load)?;
    let wall_s = start.elapsed().as_secs_f64();
    let (t1, s1, me1) = (read_totals()?, read_pid(&pid)?, read_pid("self")?);
    let server_ticks = s1.own().saturating_sub(s0.own());
    let known = server_ticks + me1.with_children().saturating_sub(me0.with_children());
    let other = t1.busy.saturating_sub(t0.busy).saturating_sub(known);
    if w.requests == 0 {
        bail!(
            "{} served no request during a {} s run",
            server.name,
            cfg.seconds
        );
    }
    Ok(Sample {
        round,
        server_ticks,
        cpu_us_per_req: server_ticks as f64 * 1e6 / tck as f64 / w.requests as f64,
        other_cpu_pct: other as f64 * 100.0 / tck as f64 / wall_s,
        wall_s,
        wrk: w,
    })
}

/// % of one core used by everything but the harness over one idle second.
fn background_pct(tck: u64) -> Result<f64> {
    let (t0, me0, start) = (read_totals()?, read_pid("self")?, Instant::now());
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (t1, me1) = (read_totals()?, read_pid("self")?);
    let mine = me1.with_children().saturating_sub(me0.with_children());
    let other = t1.busy.saturating_sub(t0.busy).saturating_sub(mine);
    Ok(other as f64 * 100.0 / tck as f64 / start.elapsed().as_secs_f64())
}

/// The servers the selected rows need, by kind.
struct Servers {
    base: Option<Server>,
    lua: Option<Server>,
    lua_nogroup: Option<Server>,
}

impl Servers {
    fn all(&self) -> impl Iterator<Item = &Server> {
        [&self.base, &self.lua, &self.lua_nogroup]
            .into_iter()
            .filter_map(|s| s.as_ref())
    }
}

fn start_lua(cfg: &Config, dir: &Path, name: &str, extra: &[&str]) -> Result<Server> {
    let mut args: Vec<OsString> = vec!["-p".into(), "0".into(), "-d".into()];
    args.push(dir.join(format!("{name}.db")).into());
    args.extend(["--workers".into(), "1".into()]);
    args.extend(extra.iter().map(OsString::from));
    args.push(cfg.app.clone().into());
    let s = Server::start(
        name,
        &cfg.cove,
        &args,
        cfg.server_core,
        &dir.join(format!("{name}.log")),
    )?;
    // /visits must return 20 rows: seed them before any check.
    for _ in 0..25 {
        s.check("GET", "/", None, "\"message\"")?;
    }
    let (_, body) = s.request("GET", "/visits", None)?;
    let n = body.matches("\"path\"").count();
    if n < 20 {
        bail!("GET /visits returned {n} rows after seeding, expected 20: {body}");
    }
    Ok(s)
}

fn start_servers(cfg: &Config, rows: &[&Row], dir: &Path) -> Result<Servers> {
    let need = |s| rows.iter().any(|r| r.srv == s);
    let base = if need(Srv::Baseline) {
        let args: Vec<OsString> = ["baseline", "-p", "0", "--workers", "1"]
            .iter()
            .map(OsString::from)
            .collect();
        Some(Server::start(
            "baseline",
            &cfg.cove,
            &args,
            cfg.server_core,
            &dir.join("baseline.log"),
        )?)
    } else {
        None
    };
    let lua = if need(Srv::Lua) {
        Some(start_lua(cfg, dir, "lua", &[])?)
    } else {
        None
    };
    let lua_nogroup = if need(Srv::LuaNoGroup) {
        Some(start_lua(cfg, dir, "lua-nogroup", &["--no-group-commit"])?)
    } else {
        None
    };
    Ok(Servers {
        base,
        lua,
        lua_nogroup,
    })
}

/// Run every selected row: checks, warm-up, then `cfg.rounds` interleaved rounds.
pub fn run(cfg: &Config, rows: &[&'static Row], tck: u64) -> Result<Run> {
    let dir = std::env::temp_dir().join(format!("cove-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    servers::set_scratch(&dir);
    let script = post_script(&dir)?;
    let mut servers = start_servers(cfg, rows, &dir)?;
    let pick = |r: &Row| match r.srv {
        Srv::Baseline => servers.base.as_ref().expect("baseline started"),
        Srv::Lua => servers.lua.as_ref().expect("lua started"),
        Srv::LuaNoGroup => servers.lua_nogroup.as_ref().expect("lua started"),
    };
    for r in rows {
        pick(r).check(r.method, r.path, r.body, r.expect)?;
    }
    let loads: Vec<(String, Option<&Path>)> = rows
        .iter()
        .map(|r| {
            let url = format!("http://{}{}", pick(r).addr, r.path);
            (url, r.body.map(|_| script.as_path()))
        })
        .collect();
    let load = |i: usize, seconds: u64| Load {
        url: &loads[i].0,
        seconds,
        connections: cfg.connections,
        core: cfg.wrk_core,
        script: loads[i].1,
    };
    let per_run = 0.3;
    let mut p = Progress {
        total_s: 1.0
            + rows.len() as f64
                * (cfg.warmup as f64
                    + per_run
                    + cfg.rounds as f64 * (cfg.seconds as f64 + per_run)),
        done_s: 0.0,
        started: Instant::now(),
        tty: std::io::stderr().is_terminal(),
    };
    p.show("measuring background load (1 s)");
    let background = background_pct(tck)?;
    p.done_s += 1.0;
    if background > cfg.noise_pct {
        p.show(&format!(
            "warning: other processes are using {background:.0}% of a core; results may be noisy"
        ));
        if p.tty {
            eprintln!();
        }
    }
    if cfg.warmup > 0 {
        for (i, r) in rows.iter().enumerate() {
            p.show(&format!("warm-up {} ({}/{})", r.name, i + 1, rows.len()));
            wrk::run(&load(i, cfg.warmup)).with_context(|| format!("warm-up of {}", r.name))?;
            p.done_s += cfg.warmup as f64 + per_run;
        }
    }
    let mut results: Vec<RowResult> = rows
        .iter()
        .map(|&row| RowResult {
            row,
            samples: Vec::new(),
            discarded: Vec::new(),
        })
        .collect();
    for round in 1..=cfg.rounds {
        for (i, r) in rows.iter().enumerate() {
            p.show(&format!(
                "{} round {round}/{} ({}/{})",
                r.name,
                cfg.rounds,
                i + 1,
                rows.len()
            ));
            let mut s = measure(cfg, pick(r), &load(i, cfg.seconds), tck, round)
                .with_context(|| format!("{} round {round}", r.name))?;
            if s.other_cpu_pct > cfg.noise_pct {
                p.show(&format!(
                    "{} round {round}/{}: other processes used {:.0}% of a core, redoing",
                    r.name, cfg.rounds, s.other_cpu_pct
                ));
                p.total_s += cfg.seconds as f64 + per_run;
                let again = measure(cfg, pick(r), &load(i, cfg.seconds), tck, round)?;
                results[i].discarded.push(std::mem::replace(&mut s, again));
                p.done_s += cfg.seconds as f64 + per_run;
            }
            results[i].samples.push(s);
            p.done_s += cfg.seconds as f64 + per_run;
        }
        for s in servers.all() {
            if !s.alive() {
                bail!("server {} exited during round {round}", s.name);
            }
        }
    }
    p.finish();
    for s in [
        &mut servers.base,
        &mut servers.lua,
        &mut servers.lua_nogroup,
    ] {
        if let Some(s) = s.as_mut() {
            s.stop()?;
        }
    }
    servers::remove_scratch();
    Ok(Run {
        rows: results,
        background_pct: Some(background),
    })
}
