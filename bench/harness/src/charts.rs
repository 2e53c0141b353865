//! The report's SVG charts (one bar chart per table section, latency vs
//! concurrency lines for the sweep) and the copy of the report in
//! docs/benchmarks.md.

use std::path::Path;

use anyhow::{Context, Result};

use crate::plan::Kind;
use crate::report::{chart_name, group, server_name, sweep_servers};
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
                    "req/s",
                    &bars,
                ),
            )?;
        }
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

const START: &str = "<!-- bench:report:start -->";
const END: &str = "<!-- bench:report:end -->";

/// The report as it sits in docs/: headings one level down, chart links
/// pointing at bench/results/.
pub fn for_docs(md: &str) -> String {
    let mut out = String::new();
    for line in md.lines() {
        let line = if line.starts_with('#') {
            format!("#{line}")
        } else {
            line.to_string()
        };
        out += &line.replace("](", "](../bench/results/");
        out.push('\n');
    }
    out
}

/// Replace the report between the markers in docs/benchmarks.md (append
/// the markers when they are missing).
pub fn update_docs(path: &Path, md: &str) -> Result<()> {
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
        assert_eq!(
            d,
            "## Title\n\n![x](../bench/results/hello-json.svg)\ntext\n"
        );
    }

    #[test]
    fn docs_are_updated_between_markers() {
        let path = std::env::temp_dir().join(format!("cove-bench-docs-{}.md", std::process::id()));
        std::fs::write(&path, "intro\n").unwrap();
        update_docs(&path, "# R1\n").unwrap();
        update_docs(&path, "# R2\n").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(text.starts_with("intro\n"));
        assert!(text.contains("## R2") && !text.contains("R1"), "{text}");
        assert_eq!(text.matches(START).count(), 1);
    }
}
