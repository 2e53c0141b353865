//! One budget, one meaning: the same runaway loop is stopped after about the
//! same CPU time in Lua and in JavaScript (within 2x, docs/security.md,
//! "Script limits"). A time figure, so a stress probe and not a test; the
//! integration tests compare iteration counts instead
//! (crates/cove/tests/hostile_scripts/budget.rs).

use std::path::Path;

use anyhow::Result;

use super::{Ctx, Finding};
use crate::procstat::{clk_tck, tree_ticks};

/// Requests per loop and runtime; the median is compared.
const RUNS: usize = 5;

pub fn budget_parity(ctx: &Ctx) -> Result<Finding> {
    let js = ctx.app.with_file_name("app.js");
    let mut parts = Vec::new();
    let mut held = true;
    for path in ["/empty", "/loop"] {
        let lua = stop_seconds(ctx, ctx.app, path)?;
        let js = stop_seconds(ctx, &js, path)?;
        let ratio = lua / js;
        held &= (0.5..=2.0).contains(&ratio);
        parts.push(format!(
            "{path}: Lua {lua:.2} s, JS {js:.2} s of CPU ({ratio:.2}x)"
        ));
    }
    Ok(Finding {
        probe: "budget",
        figure: format!("default budget, median of {RUNS}: {}", parts.join("; ")),
        held,
    })
}

/// Median server CPU seconds one request of `path` takes to be stopped.
fn stop_seconds(ctx: &Ctx, app: &Path, path: &str) -> Result<f64> {
    let server = ctx.serve_app("budget", app, &["-w", "1"])?;
    let tck = clk_tck()? as f64;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let before = tree_ticks(server.pid);
        let status = server.request("GET", path, None)?.status;
        anyhow::ensure!(status == 500, "{path} answered {status}, not 500");
        times.push((tree_ticks(server.pid) - before) as f64 / tck);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[RUNS / 2])
}
