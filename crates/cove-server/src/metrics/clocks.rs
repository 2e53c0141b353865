//! Worker threads' CPU clocks, read when `/metrics` is scraped. The one
//! module here with `unsafe`: libc's per-thread clocks.

use std::sync::{Mutex, PoisonError};

/// Each worker thread's CPU clock, by worker label.
static WORKER_CLOCKS: Mutex<Vec<(String, libc::clockid_t)>> = Mutex::new(Vec::new());

/// Note this thread's CPU clock as `worker`'s (once per worker).
#[allow(unsafe_code)]
pub(super) fn register_worker_clock(worker: &str) {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: pthread_self is this live thread; `clock` is a valid out pointer.
    if unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) } != 0 {
        return;
    }
    let mut clocks = WORKER_CLOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    match clocks.iter_mut().find(|(w, _)| w == worker) {
        Some(entry) => entry.1 = clock,
        None => clocks.push((worker.to_string(), clock)),
    }
}

/// Read the workers' CPU clocks into `cove_worker_cpu_microseconds_total`
/// (on the metrics thread, as it is scraped: nothing on the request path).
#[allow(unsafe_code)]
pub(super) fn sample_workers() {
    let clocks = WORKER_CLOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    for (worker, clock) in clocks.iter() {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid out pointer; a clock whose thread has
        // ended fails (EINVAL) and is skipped.
        if unsafe { libc::clock_gettime(*clock, &mut ts) } != 0 {
            continue;
        }
        let micros = ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000;
        metrics::counter!("cove_worker_cpu_microseconds_total", "worker" => worker.clone())
            .absolute(micros);
    }
}
