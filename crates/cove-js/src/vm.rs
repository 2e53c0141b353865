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
//! limits"; tests/hostile_scripts/budget.rs); the empty loop does a quarter
//! of Lua's iterations.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use rquickjs::{Context, Runtime};

use cove_core::Limits;

/// Budget units charged per QuickJS poll point.
pub const POLL_WEIGHT: i64 = 4;

/// Poll points between two interrupt-handler calls (quickjs.c
/// `JS_INTERRUPT_COUNTER_INIT`).
const POLLS_PER_CHECK: i64 = 10_000;

/// QuickJS's own stack limit; worker threads have 2 MiB.
const MAX_STACK: usize = 1024 * 1024;

/// The instruction budget of the current handler or middleware call. The
/// interrupt handler must be `Send`, hence atomics (only one thread uses it).
pub(crate) struct Budget {
    remaining: AtomicI64,
    pub(crate) limit: u64,
    exceeded: AtomicBool,
}

impl Budget {
    pub(crate) fn reset(&self) {
        let limit = i64::try_from(self.limit).unwrap_or(i64::MAX);
        self.remaining.store(limit, Ordering::Relaxed);
        self.exceeded.store(false, Ordering::Relaxed);
    }

    pub(crate) fn exceeded(&self) -> bool {
        self.exceeded.load(Ordering::Relaxed)
    }

    /// Charge one interrupt period; true stops the script.
    fn charge(&self) -> bool {
        let cost = POLLS_PER_CHECK * POLL_WEIGHT;
        let left = self.remaining.fetch_sub(cost, Ordering::Relaxed) - cost;
        if left < 0 {
            self.exceeded.store(true, Ordering::Relaxed);
        }
        left < 0
    }

    pub(crate) fn message(&self) -> String {
        format!(
            "instruction limit exceeded ({} instructions per call; raise it with --max-instructions)",
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
    });
    budget.reset();
    let b = budget.clone();
    rt.set_interrupt_handler(Some(Box::new(move || b.charge())));
    let ctx = Context::full(&rt)?;
    ctx.with(|c| crate::layout::probe(c.as_raw().as_ptr()));
    Ok((rt, ctx, budget))
}
