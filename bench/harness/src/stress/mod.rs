//! `cove-bench --stress` (run it through tools/stress): probes of how Cove
//! holds up under abuse, one line each with its figure. Not in CI: the load
//! probe alone runs a minute. The fast versions of these promises are
//! integration tests (crates/cove/tests/http_abuse.rs, hostile_scripts.rs,
//! durability.rs); this measures them at full size.

mod budget;
mod conns;
mod probes;

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::servers::{self, Launch, Server};
use crate::Config;

/// One probe's outcome: its figure, and whether the promise held.
pub struct Finding {
    pub probe: &'static str,
    pub figure: String,
    pub held: bool,
}

impl Finding {
    fn line(&self) -> String {
        let verdict = if self.held { "ok" } else { "FAILED" };
        format!("{:<14} {verdict:<6} {}", self.probe, self.figure)
    }
}

pub fn run(cfg: &Config) -> Result<()> {
    servers::install_signal_handler()?;
    let scratch = tempfile_dir()?;
    servers::set_scratch(&scratch);
    let app = cfg.root.join("bench/apps/stress/app.lua");
    println!(
        "cove-bench --stress: {} ({}), app {}",
        cfg.cove.display(),
        version(&cfg.cove),
        app.display()
    );
    // The servers run in the scratch directory: a relative path would miss.
    let cove = cfg.cove.canonicalize().unwrap_or_else(|_| cfg.cove.clone());
    let probes: [fn(&Ctx) -> Result<Finding>; 5] = [
        probes::slow_clients,
        probes::load,
        probes::fd_limit,
        probes::hostile_handlers,
        budget::budget_parity,
    ];
    let ctx = Ctx {
        cfg,
        cove: &cove,
        app: &app,
        scratch: &scratch,
    };
    let mut failed = 0;
    for probe in probes {
        let finding = probe(&ctx)?;
        failed += usize::from(!finding.held);
        println!("{}", finding.line());
    }
    servers::remove_scratch();
    if failed > 0 {
        anyhow::bail!("{failed} probe(s) failed");
    }
    Ok(())
}

/// What every probe needs: the binary, the app, a scratch directory.
pub struct Ctx<'a> {
    pub cfg: &'a Config,
    pub cove: &'a Path,
    pub app: &'a Path,
    pub scratch: &'a Path,
}

impl Ctx<'_> {
    /// Cove serving the stress app on a free port, with `extra` flags; under
    /// `sh -c 'ulimit -n N; exec …'` when `nofile` is given.
    pub fn serve(&self, name: &str, extra: &[&str], nofile: Option<u32>) -> Result<Server> {
        self.serve_with(name, self.app, extra, nofile)
    }

    /// Cove serving `app` (a twin of the stress app) on a free port.
    pub fn serve_app(&self, name: &str, app: &Path, extra: &[&str]) -> Result<Server> {
        self.serve_with(name, app, extra, None)
    }

    fn serve_with(
        &self,
        name: &str,
        app: &Path,
        extra: &[&str],
        nofile: Option<u32>,
    ) -> Result<Server> {
        let port = servers::free_port()?;
        let db = self.scratch.join(format!("{name}.db"));
        let mut args: Vec<String> = vec![
            "-p".into(),
            port.to_string(),
            "-d".into(),
            db.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(app.display().to_string());
        let (program, args) = match nofile {
            None => (self.cove.to_path_buf(), args),
            Some(n) => {
                let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
                let script = format!(
                    "ulimit -n {n} && exec '{}' {}",
                    self.cove.display(),
                    quoted.join(" ")
                );
                ("sh".into(), vec!["-c".into(), script])
            }
        };
        let launch = Launch {
            program,
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: self.scratch.to_path_buf(),
            cores: "0,1".into(),
        };
        let log = self.scratch.join(format!("{name}.log"));
        Server::start(name, &launch, port, &log, Duration::from_secs(15))
    }
}

fn version(cove: &Path) -> String {
    std::process::Command::new(cove)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|_| "version unknown".into())
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("cove-stress-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
