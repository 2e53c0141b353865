//! The report's SVG charts (one bar chart per table section, latency vs
//! concurrency lines for the sweep) and the copy of the report in
//! docs/benchmarks.md.

use std::path::Path;

use anyhow::{Context, Result};

use crate::plan::Kind;
use crate::report::{chart_name, group, server_name, sweep_servers, table_servers};
use crate::runner::Run;
use crate::summary::summarize_cell;
use crate::svg::{bar_chart, line_chart, Bar, Series};
use crate::workloads::{Table, TABLES};

fn plain(name: &str) -> String {
    name.replace("**", "").replace('`', "")
}

/// Write every chart of the run into `dir` (removing the previous run's);
/// returns how many.
pub fn write_all(run: &Run, dir: &Path) -> Result<usize> {
    for e in std::fs::read_dir(dir)?.filter_map(|e| e.ok()) {
        if e.path().extension().is_some_and(|x| x == "svg") {
            std::fs::remove_file(e.path())?;
        }
    }
    let mut n = 0;
    let mut put = |name: String, svg: String| -> Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, svg).with_context(|| format!("cannot write {}", path.display()))?;
        n += 1;
        Ok(())
    };
    for table in TABLES {
        if table == Table::Sweep {
            continue;
        }
        for w in table.workloads() {
            let cells = group(run, table, w, None);
            if cells.is_empty() {
                continue;
            }
            let bars: Vec<Bar> = cells
                .iter()
                .filter_map(|(c, s)| {
                    let q = s.rps?;
                    let server = &run.servers[c.m.server];
                    Some(Bar {
                        label: plain(&server_name(server)),
                        value: q.median,
                        min: Some(q.min),
                        max: Some(q.max),
                        highlight: server.kind != Kind::Peer,
                    })
                })
                .collect();
            put(
                chart_name(table, w),
                bar_chart(
                    &format!("{} — {}", w.label(), table.title()),
                    if table == Table::Ws {
                        "messages/s"
                    } else {
                        "req/s"
                    },
                    &bars,
                ),
            )?;
        }
    }
    let ratios = template_ratio_bars(run);
    if !ratios.is_empty() {
        put(
            "templates-ratio.svg".into(),
            bar_chart(
                "Template routes: CPU/request ÷ the same server's /health (target: /full ≤ 2.0×)",
                "× /health",
                &ratios,
            ),
        )?;
    }
    let mut p50 = Vec::new();
    let mut p99 = Vec::new();
    for i in sweep_servers(run) {
        let points = |pick: fn(&crate::summary::CellSummary) -> Option<f64>| -> Vec<(f64, f64)> {
            run.cells
                .iter()
                .filter(|c| c.m.table == Table::Sweep && c.m.server == i)
                .filter_map(|c| Some((c.m.connections as f64, pick(&summarize_cell(run, c))?)))
                .collect()
        };
        let s = &run.servers[i];
        let name = plain(&server_name(s));
        let highlight = s.kind != Kind::Peer;
        p50.push(Series {
            name: format!("{name} p50"),
            points: points(|x| x.p50_ms),
            highlight,
        });
        p99.push(Series {
            name: format!("{name} p99"),
            points: points(|x| x.p99_ms),
            highlight,
        });
    }
    for (name, series) in [("p50", p50), ("p99", p99)] {
        if !series.is_empty() {
            let title = format!("{name} latency vs concurrency, GET /hello");
            put(
                format!("sweep-{name}.svg"),
                line_chart(&title, "connections", "latency (ms)", &series, true),
            )?;
        }
    }
    Ok(n)
}

/// One bar per template route other than `/health` and runtime: its CPU
/// ratio to `/health` (median, min–max over rounds).
fn template_ratio_bars(run: &Run) -> Vec<Bar> {
    let table = Table::Templates;
    let mut bars = Vec::new();
    for i in table_servers(run, table) {
        let server = &run.servers[i];
        for c in run
            .cells
            .iter()
            .filter(|c| c.m.table == table && c.m.server == i)
            .filter(|c| Some(c.m.workload.name) != table.reference())
        {
            if let Some(q) = summarize_cell(run, c).ref_ratio {
                bars.push(Bar {
                    label: format!("{} {}", plain(&server_name(server)), c.m.workload.path),
                    value: q.median,
                    min: Some(q.min),
                    max: Some(q.max),
                    highlight: c.m.workload.name == "tpl-full",
                });
            }
        }
    }
    bars
}

const START: &str = "<!-- bench:report:start -->";
const END: &str = "<!-- bench:report:end -->";

/// Where a full run's charts are kept for docs/benchmarks.md, so that later
/// `--quick` or `--only` runs (which rewrite bench/results/) leave the
/// published report intact. Relative to the docs file's folder.
const DOCS_CHARTS: &str = "benchmarks";

/// The report as it sits in docs/: headings one level down, chart links
/// pointing at the docs' own copy of the charts.
pub fn for_docs(md: &str) -> String {
    let mut out = String::new();
    for line in md.lines() {
        let line = if line.starts_with('#') {
            format!("#{line}")
        } else {
            line.to_string()
        };
        out += &line.replace("](", &format!("]({DOCS_CHARTS}/"));
        out.push('\n');
    }
    out
}

/// Replace the report between the markers in the docs file `path` (append
/// the markers when they are missing) and copy the charts of `results`
/// next to it, replacing the previous ones.
pub fn update_docs(path: &Path, md: &str, results: &Path) -> Result<()> {
    let charts = path.parent().unwrap_or(Path::new(".")).join(DOCS_CHARTS);
    std::fs::create_dir_all(&charts)
        .with_context(|| format!("cannot create {}", charts.display()))?;
    for dir in [&charts, &results.to_path_buf()] {
        for e in std::fs::read_dir(dir)?.filter_map(|e| e.ok()) {
            if e.path().extension().is_some_and(|x| x == "svg") {
                if dir == &charts {
                    std::fs::remove_file(e.path())?;
                } else {
                    std::fs::copy(e.path(), charts.join(e.file_name()))?;
                }
            }
        }
    }
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let body = format!("{START}\n{}{END}", for_docs(md));
    let new = match (old.find(START), old.find(END)) {
        (Some(a), Some(b)) if a < b => format!("{}{body}{}", &old[..a], &old[b + END.len()..]),
        _ => format!("{}\n{body}\n", old.trim_end()),
    };
    std::fs::write(path, new).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_copy_moves_headings_and_links() {
        let d = for_docs("# Title\n\n![x](hello-json.svg)\ntext\n");
        assert_eq!(d, "## Title\n\n![x](benchmarks/hello-json.svg)\ntext\n");
    }

    #[test]
    fn docs_are_updated_between_markers_with_their_charts() {
        let dir = std::env::temp_dir().join(format!("cove-bench-docs-{}", std::process::id()));
        let results = dir.join("results");
        std::fs::create_dir_all(&results).unwrap();
        std::fs::create_dir_all(dir.join("benchmarks")).unwrap();
        std::fs::write(dir.join("benchmarks/stale.svg"), "<svg/>").unwrap();
        std::fs::write(results.join("hello-json.svg"), "<svg/>").unwrap();
        let path = dir.join("benchmarks.md");
        std::fs::write(&path, "intro\n").unwrap();
        update_docs(&path, "# R1\n", &results).unwrap();
        update_docs(&path, "# R2\n", &results).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let fresh = dir.join("benchmarks/hello-json.svg").is_file();
        let stale = dir.join("benchmarks/stale.svg").exists();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(text.starts_with("intro\n"));
        assert!(text.contains("## R2") && !text.contains("R1"), "{text}");
        assert_eq!(text.matches(START).count(), 1);
        assert!(fresh && !stale);
    }
}
