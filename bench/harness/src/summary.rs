//! The numbers of each report cell: medians over rounds, the CPU ratio to
//! the baseline of the same round, and the speed factor within a table.

use crate::plan::Kind;
use crate::runner::{Cell, Run, Sample};
use crate::stats::{median, summarize, Summary};
use crate::workloads::Table;

/// The numbers of one cell.
#[derive(Debug, Clone, Default)]
pub struct CellSummary {
    pub rps: Option<Summary>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub cpu_us: Option<Summary>,
    /// Per round: this cell's CPU-µs/req ÷ the baseline's in the same round.
    pub ratio: Option<Summary>,
    /// Per round: this cell's CPU-µs/req ÷ the same server's on the table's
    /// reference workload (`Table::reference`) in the same round.
    pub ref_ratio: Option<Summary>,
    /// Database rows written + read per second.
    pub rows_per_s: Option<f64>,
    /// The database server's CPU-µs per request (`pg`, `redis` tables).
    pub db_cpu_us: Option<Summary>,
    /// Per round, the app's plus the database server's CPU-µs per request.
    pub total_cpu_us: Option<Summary>,
    /// Socket errors, and non-2xx responses where none are expected.
    pub errors: u64,
}

fn series(samples: &[Sample], f: impl Fn(&Sample) -> Option<f64>) -> Vec<f64> {
    samples.iter().filter_map(f).collect()
}

/// The baseline cell a cell's CPU is compared with: the raw server on the
/// same request in the same table when it was measured there (Hull's HTTP
/// table), else its text route for text workloads, its JSON route for the
/// rest; none for the `ws` table.
pub fn baseline_for<'a>(run: &'a Run, cell: &Cell) -> Option<&'a Cell> {
    // WebSocket messages are compared with Bun's (report_ws.rs), not with
    // an HTTP request to the raw server.
    if cell.m.table == Table::Ws {
        return None;
    }
    let raw = |c: &&Cell| run.servers[c.m.server].kind == Kind::Baseline;
    let beside = run.cells.iter().filter(raw).find(|c| {
        c.m.table == cell.m.table
            && c.m.workload.name == cell.m.workload.name
            && c.m.connections == cell.m.connections
    });
    let want = if cell.m.workload.text {
        "hello"
    } else {
        "json"
    };
    beside.or_else(|| {
        run.cells
            .iter()
            .filter(raw)
            .find(|c| c.m.table == Table::Hello && c.m.workload.name == want)
    })
}

/// The cell of the same server and table on the table's reference workload.
pub fn reference_for<'a>(run: &'a Run, cell: &Cell) -> Option<&'a Cell> {
    let want = cell.m.table.reference()?;
    run.cells.iter().find(|c| {
        c.m.table == cell.m.table
            && c.m.server == cell.m.server
            && c.m.connections == cell.m.connections
            && c.m.workload.name == want
    })
}

/// Per round, `cell`'s CPU-µs/req ÷ `base`'s in the same round.
fn round_ratios(cell: &Cell, base: Option<&Cell>) -> Vec<f64> {
    let Some(b) = base else {
        return Vec::new();
    };
    cell.samples
        .iter()
        .filter_map(|x| {
            let base = b.samples.iter().find(|y| y.round == x.round)?;
            Some(x.cpu_us_per_req / base.cpu_us_per_req)
        })
        .collect()
}

pub fn summarize_cell(run: &Run, cell: &Cell) -> CellSummary {
    let s = &cell.samples;
    let ratios = round_ratios(cell, baseline_for(run, cell));
    let expect_non_2xx = cell.m.workload.expects_non_2xx();
    let errors = s
        .iter()
        .map(|x| x.wrk.socket_errors.total() + if expect_non_2xx { 0 } else { x.wrk.non_2xx })
        .sum();
    let rps = summarize(&series(s, |x| Some(x.wrk.req_per_sec)));
    CellSummary {
        rps,
        p50_ms: median(&series(s, |x| x.wrk.percentile(50.0))),
        p99_ms: median(&series(s, |x| x.wrk.percentile(99.0))),
        cpu_us: summarize(&series(s, |x| Some(x.cpu_us_per_req))),
        ratio: summarize(&ratios),
        ref_ratio: summarize(&round_ratios(cell, reference_for(run, cell))),
        rows_per_s: cell
            .m
            .workload
            .rows
            .zip(rps)
            .map(|(n, q)| n as f64 * q.median),
        db_cpu_us: summarize(&series(s, |x| x.db_cpu_us_per_req)),
        total_cpu_us: summarize(&series(s, |x| {
            x.db_cpu_us_per_req.map(|d| d + x.cpu_us_per_req)
        })),
        errors,
    }
}

/// Each req/s ÷ the lowest of the group (`None` where there is no number).
pub fn speed_factors(rps: &[Option<f64>]) -> Vec<Option<f64>> {
    let slowest = rps
        .iter()
        .flatten()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    rps.iter()
        .map(|v| v.filter(|_| slowest.is_finite()).map(|v| v / slowest))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_factor_is_relative_to_the_slowest() {
        let f = speed_factors(&[Some(100.0), None, Some(25.0), Some(50.0)]);
        assert_eq!(f, [Some(4.0), None, Some(1.0), Some(2.0)]);
        assert_eq!(speed_factors(&[None, Some(0.0)]), [None, None]);
        assert!(speed_factors(&[]).is_empty());
    }
}
