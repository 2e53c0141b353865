//! Whether `--metrics` is on: read by the crates that record metrics
//! (cove-db, cove-caps, cove-server) before they touch the `metrics`
//! facade, so that a server without metrics pays one relaxed load where
//! they would record.

use std::sync::atomic::{AtomicBool, Ordering};

static ON: AtomicBool = AtomicBool::new(false);

/// Whether metrics are recorded in this process.
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Record metrics from now on (set once, when the recorder is installed).
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}
