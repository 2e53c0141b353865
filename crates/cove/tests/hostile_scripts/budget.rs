//! One budget, one meaning: a loop stopped by `--max-instructions` has done
//! about the same work in Lua and in JavaScript. Lua counts VM
//! instructions; QuickJS only polls at branches and calls, and Cove charges
//! each poll point `POLL_WEIGHT` (4) units (crates/cove-js/src/vm.rs). The
//! loops count their own iterations into a variable the next request reads:
//! the work is compared, never the time.

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
#[test]
fn each_call_gets_the_whole_budget() {
    for lang in [Lang::Lua, Lang::Js] {
        let s = one_worker(lang, &["--max-instructions", BUDGET]);
        let first = spin(&s, "busy");
        let second = spin(&s, "busy");
        assert!(
            first.abs_diff(second) <= PERIOD,
            "{lang:?}: {first} then {second} iterations"
        );
    }
}
