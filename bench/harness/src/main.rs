//! cove-bench: the Cove overhead benchmark (issue 2). See `bench/run --help`.

mod machine;
mod procstat;
mod report;
mod rows;
mod runner;
mod servers;
mod stats;
mod wrk;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use rows::selected;

#[derive(Debug, Clone)]
pub struct Config {
    pub rounds: usize,
    pub seconds: u64,
    pub warmup: u64,
    pub connections: u32,
    pub only: Option<String>,
    pub cove: PathBuf,
    pub app: PathBuf,
    pub out_dir: PathBuf,
    pub server_core: u32,
    pub wrk_core: u32,
    /// Redo a round when other processes used more than this % of a core.
    pub noise_pct: f64,
    pub quick: bool,
}

const HELP: &str = "\
cove-bench: Cove's overhead benchmark (run it through bench/run)

Starts `cove baseline` and `cove … bench/apps/hello/app.lua` (--workers 1,
pinned to core 0), drives them with wrk (-t1 -c50, pinned to core 1) in
interleaved rounds and reports req/s, p50/p99 and server CPU-µs per request
relative to the baseline. Writes bench/results/latest.{md,json}.

Options:
  --quick            3 rounds × 2 s (warm-up 1 s) instead of 5 × 5 s (2 s)
  --rounds N         number of interleaved rounds
  --duration S       seconds per wrk run
  --warmup S         warm-up seconds per route (0 = none)
  --connections N    wrk connections (default 50)
  --only NAME        only rows whose name, label or path contains NAME
                     (names: baseline health greet echo insert select20)
  --cove PATH        cove binary (default: next to cove-bench)
  --app PATH         Lua app (default: bench/apps/hello/app.lua)
  --out DIR          results directory (default: bench/results)
  -h, --help         this text";

fn parse_args(args: &[String]) -> Result<Option<Config>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let exe_dir = std::env::current_exe()?
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut cfg = Config {
        rounds: 5,
        seconds: 5,
        warmup: 2,
        connections: 50,
        only: None,
        cove: exe_dir.join("cove"),
        app: root.join("bench/apps/hello/app.lua"),
        out_dir: root.join("bench/results"),
        server_core: 0,
        wrk_core: 1,
        noise_pct: 10.0,
        quick: false,
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
            "--only" => cfg.only = Some(value(a)?),
            "--cove" => cfg.cove = PathBuf::from(value(a)?),
            "--app" => cfg.app = PathBuf::from(value(a)?),
            "--out" => cfg.out_dir = PathBuf::from(value(a)?),
            other => bail!("unknown argument {other:?} (see --help)"),
        }
    }
    let (r, s, w) = if cfg.quick { (3, 2, 1) } else { (5, 5, 2) };
    cfg.rounds = rounds.unwrap_or(r);
    cfg.seconds = seconds.unwrap_or(s);
    cfg.warmup = warmup.unwrap_or(w);
    if cfg.rounds == 0 || cfg.seconds == 0 || cfg.connections == 0 {
        bail!("--rounds, --duration and --connections must be at least 1");
    }
    Ok(Some(cfg))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
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
    if let Err(e) = run(&cfg) {
        servers::remove_scratch();
        eprintln!("cove-bench: {e:#}");
        std::process::exit(1);
    }
}

fn run(cfg: &Config) -> Result<()> {
    let rows = selected(cfg.only.as_deref());
    if rows.is_empty() {
        bail!(
            "--only {:?} matches no row",
            cfg.only.as_deref().unwrap_or("")
        );
    }
    if !cfg.cove.is_file() {
        bail!(
            "{} not found; build it with `cargo build --release -p cove`",
            cfg.cove.display()
        );
    }
    servers::install_signal_handler()?;
    let machine = machine::Machine::detect(cfg)?;
    let results = runner::run(cfg, &rows, machine.clk_tck)?;
    let md = report::markdown(cfg, &machine, &results);
    let json = report::json(cfg, &machine, &results);
    println!("{md}");
    std::fs::create_dir_all(&cfg.out_dir)?;
    let md_path = cfg.out_dir.join("latest.md");
    let json_path = cfg.out_dir.join("latest.json");
    std::fs::write(&md_path, &md).with_context(|| format!("cannot write {}", md_path.display()))?;
    std::fs::write(&json_path, serde_json::to_string_pretty(&json)? + "\n")
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    eprintln!("wrote {} and {}", md_path.display(), json_path.display());
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
            (5, 5, 2, 50)
        );
        let q = parse_args(&args("--quick --rounds 4")).unwrap().unwrap();
        assert_eq!((q.rounds, q.seconds, q.warmup), (4, 2, 1));
        assert!(parse_args(&args("--help")).unwrap().is_none());
        assert!(parse_args(&args("--bogus")).is_err());
        assert!(parse_args(&args("--rounds")).is_err());
        assert!(parse_args(&args("--rounds 0")).is_err());
    }
}
