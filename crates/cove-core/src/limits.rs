/// What a script is told when its VM runs out of heap (both runtimes).
pub const OUT_OF_HEAP: &str =
    "not enough memory: the script heap limit was reached (raise it with -m)";

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
