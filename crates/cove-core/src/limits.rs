/// What a script is told when its VM runs out of heap (both runtimes).
pub const OUT_OF_HEAP: &str =
    "not enough memory: the script heap limit was reached (raise it with -m)";

/// How the message of a script stopped by its instruction budget starts
/// (both runtimes).
pub const OVER_BUDGET: &str = "instruction limit exceeded";

/// A limit a script call ran into, told from its error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitHit {
    /// The instruction budget (`--max-instructions`).
    Budget,
    /// The VM heap cap (`-m`).
    Heap,
}

impl LimitHit {
    /// The limit `message` (a script error, with its location and
    /// traceback) reports, if any. The engines build these messages from
    /// [`OVER_BUDGET`] and [`OUT_OF_HEAP`]; a script's own error that
    /// quotes them counts too, which the metrics can live with.
    pub fn of(message: &str) -> Option<LimitHit> {
        if message.contains(OVER_BUDGET) {
            Some(LimitHit::Budget)
        } else if message.contains(OUT_OF_HEAP) {
            Some(LimitHit::Heap)
        } else {
            None
        }
    }
}

/// Every limit the runtime enforces, in one place (defaults follow Hull).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body accepted; larger bodies get 413.
    pub max_body: usize,
    /// VM instruction budget for one handler or middleware call.
    pub max_instructions: u64,
    /// Heap cap of one script VM, in bytes.
    pub max_heap: usize,
    /// How long in-flight requests may finish after SIGINT/SIGTERM.
    pub drain_timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body: 1024 * 1024,
            max_instructions: 100_000_000,
            max_heap: 64 * 1024 * 1024,
            drain_timeout_ms: 5000,
        }
    }
}

/// How the process gives memory its allocator holds free back to the OS.
/// The allocator is process-wide (`#[global_allocator]`, and QuickJS's
/// malloc) and chosen by the binary, which no crate below it can name: the
/// binary sets this once at start. Unset (unit tests), releasing does
/// nothing.
static RELEASE: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Set what [`release_heap`] does (first call wins).
pub fn set_heap_release(release: fn()) {
    let _ = RELEASE.set(release);
}

/// After a script ran out of heap and its garbage was collected: without
/// this the allocator keeps the pages of that garbage (mimalloc purges only
/// pages it touches again), so every worker that once hit its cap would
/// hold a cap's worth of RSS for good.
pub fn release_heap() {
    if let Some(release) = RELEASE.get() {
        release();
    }
}
