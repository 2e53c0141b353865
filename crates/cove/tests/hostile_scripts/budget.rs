//! One budget, one meaning: a loop stopped by `--max-instructions` has done
//! about the same work in Lua and in JavaScript. Lua counts VM
//! instructions; QuickJS only polls at branches and calls, and Cove charges
//! each poll point `POLL_WEIGHT` (4) units (crates/cove-js/src/vm.rs). The
//! loops count their own iterations into a variable the next request reads:
//! the work is compared, never the time. The one loop that cannot count,
//! the empty one, is held to the CPU floor that keeps it within 2x of Lua's
//! time: a lower bound the clock guarantees, so no race. The time ratio
//! itself is a figure of tools/stress (its budget probe).

use std::time::{Duration, Instant};

use super::one_worker;
use crate::util::{Lang, Server};

/// Below 10M Lua counts every instruction from a call's first (larger
/// budgets start counting once a call has run 10 ms, which adds a
/// machine-dependent amount of work).
const BUDGET: &str = "4000000";

/// Loops that mean the same work in both apps (their counts are in
/// docs/security.md, "Script limits").
const SHAPES: &[&str] = &["busy", "call", "append", "cond"];

/// Shapes 2x apart by construction: a Lua iteration of `concat` and
/// `table` is 8 instructions, the JS one a single poll point (32 vs 16
/// units); a numeric `for` is 4 Lua instructions and 2 JS poll points.
/// Bounded at 2x plus one interrupt period of slack (QuickJS's count is
/// granular to 10,000 poll points).
const EDGE_SHAPES: &[&str] = &["concat", "table", "numeric_for"];

/// JS polls its interrupt handler every 10,000 poll points; each poll point
/// is at least one iteration, so a count may be off by this many.
const PERIOD: u64 = 10_000;

/// Iterations each shape did before the budget stopped it.
fn iterations(lang: Lang, shapes: &[&str]) -> Vec<u64> {
    let s = one_worker(lang, &["--max-instructions", BUDGET]);
    shapes.iter().map(|shape| spin(&s, shape)).collect()
}

fn spin(s: &Server, shape: &str) -> u64 {
    let r = s.get(&format!("/spin/{shape}"));
    assert_eq!(r.status, 500, "{shape}: {}", r.text());
    let n = s.get("/spun").json()["n"].as_u64().expect("n");
    assert!(n > 0, "{shape} did no work");
    n
}

#[test]
fn a_budget_buys_lua_and_js_the_same_work_within_2x() {
    let lua = iterations(Lang::Lua, SHAPES);
    let js = iterations(Lang::Js, SHAPES);
    for ((shape, l), j) in SHAPES.iter().zip(lua).zip(js) {
        let ratio = l as f64 / j as f64;
        assert!(
            (0.5..=2.0).contains(&ratio),
            "{shape}: Lua did {l} iterations, JS {j} ({ratio:.2}x)"
        );
    }
}

#[test]
fn edge_shapes_stay_at_2x() {
    let lua = iterations(Lang::Lua, EDGE_SHAPES);
    let js = iterations(Lang::Js, EDGE_SHAPES);
    for ((shape, l), j) in EDGE_SHAPES.iter().zip(lua).zip(js) {
        assert!(
            l <= 2 * j + PERIOD && j <= 2 * l + PERIOD,
            "{shape}: Lua did {l} iterations, JS {j}"
        );
    }
}

/// The budget is per call: the same loop stopped twice does the same work.
/// (`call`, not `busy`: a JS `busy` loop on a fast machine may outrun the
/// CPU floor and then stop on the clock, not the count.)
#[test]
fn each_call_gets_the_whole_budget() {
    for lang in [Lang::Lua, Lang::Js] {
        let s = one_worker(lang, &["--max-instructions", BUDGET]);
        let first = spin(&s, "call");
        let second = spin(&s, "call");
        assert!(
            first.abs_diff(second) <= PERIOD,
            "{lang:?}: {first} then {second} iterations"
        );
    }
}

/// An empty JS loop spends its units 4-5x sooner than Lua's (1 poll point
/// against 1 instruction per iteration, each cheaper), so it runs on until
/// it has used 1.5 ns of thread CPU per unit (crates/cove-js/src/vm.rs
/// `FLOOR_PS_PER_UNIT`); wall time is never less than that CPU time. Lua
/// needs no floor: its count sees every instruction.
#[test]
fn an_empty_js_loop_runs_for_the_cpu_floor() {
    const UNITS: u64 = 40_000_000;
    let floor = Duration::from_nanos(UNITS * 3 / 2);
    let s = one_worker(Lang::Js, &["--max-instructions", &UNITS.to_string()]);
    for _ in 0..3 {
        let t = Instant::now();
        let r = s.get("/loop");
        let took = t.elapsed();
        assert_eq!(r.status, 500, "{}", r.text());
        assert!(
            took >= floor,
            "stopped after {took:?}, before the {floor:?} floor"
        );
    }
    let log = s.log();
    assert!(log.contains("instruction limit exceeded"), "{log}");
}
