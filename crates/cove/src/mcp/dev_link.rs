//! The `cove dev` server behind `cove mcp`: the one already running for the
//! app (found through `<app>/.cove/dev.json`), or one started as a child and
//! stopped when the session ends.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rustix::process::{kill_process, Pid, Signal};

use super::events;
use crate::agent::state::{self, alive, dev_json, listening_port};

/// How long a started `cove dev` may take to listen (or report its app broken).
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stopped child gets to exit after SIGTERM before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(50);

/// The dev server the tools use.
pub struct DevLink {
    pub dir: PathBuf,
    /// Ours to stop; `None` when we attached to a running one.
    child: Option<Child>,
}

impl DevLink {
    /// Attach to the app's running `cove dev`, else start one with `port`
    /// and `db` and wait until it listens or reports that the app does not
    /// load (the tools then report that error; dev retries on each save).
    pub fn attach_or_start(dir: &Path, port: u16, db: &Path) -> Result<DevLink> {
        if listening_port(dir).is_some() {
            return Ok(DevLink {
                dir: dir.to_path_buf(),
                child: None,
            });
        }
        // A dev.json left by a crash must not pass for the new server's.
        let _ = fs::remove_file(state::path(dir, state::DEV));
        let since = events::mark(dir);
        let exe = std::env::current_exe().context("finding the cove executable")?;
        let child = Command::new(exe)
            .args(["dev", "--stop-with-parent"])
            .args(["-p", &port.to_string(), "-d"])
            .arg(db)
            .arg(dir)
            .stdin(Stdio::null())
            // stdout may be the MCP channel (stdio transport): dev's log goes to stderr.
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting `cove dev`")?;
        let mut link = DevLink {
            dir: dir.to_path_buf(),
            child: Some(child),
        };
        link.wait_started(&since)?;
        Ok(link)
    }

    fn wait_started(&mut self, since: &events::Mark) -> Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if listening_port(&self.dir).is_some() {
                return Ok(());
            }
            if events::after(&self.dir, since)
                .iter()
                .any(|e| events::is(e, "reload_failed"))
            {
                return Ok(());
            }
            if let Some(child) = &mut self.child {
                if let Some(status) = child.try_wait()? {
                    self.child = None;
                    bail!("`cove dev` exited ({status}) before it listened; its error is above");
                }
            }
            sleep(POLL);
        }
        bail!(
            "`cove dev` did not listen within {} s (no {} written)",
            START_TIMEOUT.as_secs(),
            state::path(&self.dir, state::DEV).display()
        )
    }

    /// A link to whatever dev.json names, stopping nothing (unit tests).
    #[cfg(test)]
    pub fn attached(dir: &Path) -> DevLink {
        DevLink {
            dir: dir.to_path_buf(),
            child: None,
        }
    }

    /// The port the dev server listens on now, or why there is none.
    pub fn port(&self) -> Result<u16> {
        if let Some(port) = listening_port(&self.dir) {
            return Ok(port);
        }
        match &self.child {
            Some(_) => bail!(
                "the dev server is not listening: the app did not load (the `errors` tool \
                 shows why; fix it and save, or call `reload`)"
            ),
            None => bail!(
                "`cove dev` for {} is no longer running; restart it (or restart `cove mcp`, \
                 which then starts one)",
                self.dir.display()
            ),
        }
    }

    /// Whether a dev process runs (listening or waiting for a broken app to be fixed).
    pub fn running(&mut self) -> bool {
        if let Some(child) = &mut self.child {
            return matches!(child.try_wait(), Ok(None));
        }
        dev_json(&self.dir)
            .and_then(|d| d["pid"].as_i64())
            .and_then(|p| i32::try_from(p).ok())
            .is_some_and(alive)
    }

    /// Whether we started the server (and will stop it).
    pub fn started_here(&self) -> bool {
        self.child.is_some()
    }

    /// SIGTERM (dev then removes dev.json and writes `stopped`), then SIGKILL
    /// if it has not exited in time.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = kill_process(Pid::from_child(&child), Signal::TERM);
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            sleep(POLL);
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for DevLink {
    fn drop(&mut self) {
        self.stop();
    }
}
