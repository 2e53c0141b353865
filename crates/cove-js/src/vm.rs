//! A QuickJS runtime with Cove's guards: a heap cap, a stack cap and the
//! per-call instruction budget.
//!
//! QuickJS has no per-instruction hook. It polls an interrupt handler once
//! every 10,000 "poll points": each function call, each jump and each
//! conditional branch (so one or two per loop iteration), and each element
//! some builtins visit. Cove charges every poll point [`POLL_WEIGHT`] budget
//! units, where a Lua unit is one VM instruction. Straight-line code between
//! two poll points is free, so no weight makes every loop cost the same in
//! both: a loop iteration of 4 Lua instructions is 1–2 poll points, one of
//! 8 (a string or table built per iteration) is 1, an empty `for (;;) {}`
//! is 1 against Lua's 1. 4 is the one weight that keeps the loops with a
//! body within 2x of Lua's work (measured in docs/security.md, "Script
//! limits"; tests/hostile_scripts/budget.rs).
//!
//! That weight would stop the cheapest loops (an empty `for (;;) {}`, a
//! bare `while (true) {}`) after a quarter of Lua's iterations, each
//! cheaper than Lua's: 5x sooner. So a spent budget stops a call only once
//! the call has also used [`FLOOR_PS_PER_UNIT`] of thread CPU time per unit
//! (0.15 s at the default 100M), about what Lua's cheapest instruction
//! costs. Loops with a body spend their units after the floor and stop on
//! the count alone; the floor only ever lets a call run longer.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use rquickjs::{Context, Runtime};

use cove_core::Limits;

/// Budget units charged per QuickJS poll point.
pub const POLL_WEIGHT: i64 = 4;

/// Poll points between two interrupt-handler calls (quickjs.c
/// `JS_INTERRUPT_COUNTER_INIT`).
const POLLS_PER_CHECK: i64 = 10_000;

/// Thread CPU time, in picoseconds per budget unit, that a call uses before
/// a spent budget stops it: Lua runs its cheapest instruction (the jump of
/// an empty loop) in about 2.7 ns on the reference machine, so JS's empty
/// loop now stops within 2x of Lua's (docs/security.md, "Script limits").
pub const FLOOR_PS_PER_UNIT: u64 = 1_500;

/// QuickJS's own stack limit; worker threads have 2 MiB.
const MAX_STACK: usize = 1024 * 1024;

/// The instruction budget of the current handler or middleware call. The
/// interrupt handler must be `Send`, hence atomics (only one thread uses it).
pub(crate) struct Budget {
    remaining: AtomicI64,
    pub(crate) limit: u64,
    exceeded: AtomicBool,
    /// Thread CPU nanoseconds at the call's first interrupt (0: none yet):
    /// read there, not at the call's start, so short calls never read it.
    started_ns: AtomicU64,
    /// The CPU floor of a call, in nanoseconds.
    floor_ns: u64,
}

impl Budget {
    pub(crate) fn reset(&self) {
        let limit = i64::try_from(self.limit).unwrap_or(i64::MAX);
        self.remaining.store(limit, Ordering::Relaxed);
        self.exceeded.store(false, Ordering::Relaxed);
        self.started_ns.store(0, Ordering::Relaxed);
    }

    pub(crate) fn exceeded(&self) -> bool {
        self.exceeded.load(Ordering::Relaxed)
    }

    /// Charge one interrupt period; true stops the script: its units are
    /// spent and it has run for the floor.
    fn charge(&self) -> bool {
        let cost = POLLS_PER_CHECK * POLL_WEIGHT;
        let left = self.remaining.fetch_sub(cost, Ordering::Relaxed) - cost;
        let started = self.started_ns.load(Ordering::Relaxed);
        if started == 0 {
            self.started_ns
                .store(thread_cpu_ns().max(1), Ordering::Relaxed);
            return false;
        }
        if left >= 0 || thread_cpu_ns().saturating_sub(started) < self.floor_ns {
            return false;
        }
        self.exceeded.store(true, Ordering::Relaxed);
        true
    }

    pub(crate) fn message(&self) -> String {
        format!(
            "{} ({} instructions per call; raise it with --max-instructions)",
            cove_core::OVER_BUDGET,
            self.limit
        )
    }
}

/// A runtime and its one context, with the limits applied.
pub(crate) fn new_runtime(limits: &Limits) -> rquickjs::Result<(Runtime, Context, Arc<Budget>)> {
    let rt = Runtime::new()?;
    rt.set_memory_limit(limits.max_heap);
    rt.set_max_stack_size(MAX_STACK);
    let budget = Arc::new(Budget {
        remaining: AtomicI64::new(0),
        limit: limits.max_instructions,
        exceeded: AtomicBool::new(false),
        started_ns: AtomicU64::new(0),
        floor_ns: limits.max_instructions.saturating_mul(FLOOR_PS_PER_UNIT) / 1_000,
    });
    budget.reset();
    let b = budget.clone();
    rt.set_interrupt_handler(Some(Box::new(move || b.charge())));
    let ctx = Context::full(&rt)?;
    ctx.with(|c| crate::raw::layout::probe(&c));
    Ok((rt, ctx, budget))
}

/// CPU time this thread has used, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let ns = i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    u64::try_from(ns).unwrap_or(0)
}
