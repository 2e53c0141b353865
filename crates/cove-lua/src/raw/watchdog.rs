//! The watchdog of large instruction budgets (budget.rs): every [`TICK`]
//! it looks at the threads that run Lua, and signals one still in the call
//! it saw a tick before, whose handler (`budget::on_signal`) arms the count
//! hook there. It parks when no call has run for [`IDLE_TICKS`] ticks.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock, Weak};
use std::time::Duration;

use super::budget::on_signal;

/// How often the watchdog looks at the workers.
const TICK: Duration = Duration::from_millis(10);

/// Ticks without a call after which the watchdog parks.
const IDLE_TICKS: u32 = 10;

/// The signal that arms the hook (ignored by default, unused by tokio).
const ARM_SIGNAL: c_int = libc::SIGURG;

/// One OS thread that runs Lua, as the watchdog sees it: `calls` is odd
/// while a call is in progress and changes when one starts or ends.
struct Watch {
    calls: AtomicU64,
    thread: libc::pthread_t,
}

/// The watched threads. The watchdog signals while holding the lock, and a
/// thread takes itself out under it before it exits: it is never signalled
/// after.
static WATCHED: Mutex<Vec<Weak<Watch>>> = Mutex::new(Vec::new());

pub(super) struct Registration(Cell<Option<Arc<Watch>>>);

impl Registration {
    pub(super) const fn new() -> Self {
        Registration(Cell::new(None))
    }

    pub(super) fn enter(&self, exact: bool) {
        if exact {
            return;
        }
        let watch = self.0.take().unwrap_or_else(|| {
            start_watchdog();
            let watch = Arc::new(Watch {
                calls: AtomicU64::new(0),
                // SAFETY: no preconditions.
                thread: unsafe { libc::pthread_self() },
            });
            lock().push(Arc::downgrade(&watch));
            watch
        });
        // With the load after it, pairs with the watchdog's store of
        // `PARKED` and load of the counts (both sequentially consistent):
        // either it sees this call or this call sees it parked.
        watch.calls.fetch_add(1, Ordering::SeqCst);
        if PARKED.load(Ordering::SeqCst) {
            wake_watchdog();
        }
        self.0.set(Some(watch));
    }

    pub(super) fn leave(&self) {
        if let Some(watch) = self.0.take() {
            if watch.calls.load(Ordering::Relaxed) % 2 == 1 {
                watch.calls.fetch_add(1, Ordering::Relaxed);
            }
            self.0.set(Some(watch));
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(watch) = self.0.take() {
            let mut list = lock();
            let me = Arc::downgrade(&watch);
            list.retain(|w| !w.ptr_eq(&me));
        }
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<Weak<Watch>>> {
    WATCHED.lock().unwrap_or_else(|e| e.into_inner())
}

fn start_watchdog() {
    static START: Once = Once::new();
    START.call_once(|| {
        // SAFETY: installs a handler that only touches constant thread-locals
        // and calls `lua_sethook`; SA_RESTART resumes interrupted syscalls.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(ARM_SIGNAL, &action, std::ptr::null_mut());
        }
        let spawned = std::thread::Builder::new()
            .name("cove-watchdog".into())
            .spawn(watchdog);
        if let Err(e) = spawned {
            cove_core::log::error(&format!(
                "cannot start the instruction-budget watchdog: {e}"
            ));
        }
    });
}

/// Set while the watchdog is parked: the next call to start unparks it.
static PARKED: AtomicBool = AtomicBool::new(false);

/// The watchdog thread, set by itself before it first parks.
static WATCHDOG: OnceLock<std::thread::Thread> = OnceLock::new();

#[cold]
fn wake_watchdog() {
    if PARKED.swap(false, Ordering::SeqCst) {
        if let Some(t) = WATCHDOG.get() {
            t.unpark();
        }
    }
}

/// Every tick, signal the threads that are in the call they were in a tick
/// ago (and again each tick after, should the running thread change). After
/// [`IDLE_TICKS`] ticks in which no call ran, park until one starts.
fn watchdog() {
    let _ = WATCHDOG.set(std::thread::current());
    let mut seen: Vec<(Weak<Watch>, u64)> = Vec::new();
    let mut idle = 0;
    loop {
        std::thread::sleep(TICK);
        idle = if look(&mut seen, true) { 0 } else { idle + 1 };
        if idle < IDLE_TICKS {
            continue;
        }
        PARKED.store(true, Ordering::SeqCst);
        // A call that started before the store shows in its count now.
        if look(&mut seen, false) {
            PARKED.store(false, Ordering::SeqCst);
        }
        while PARKED.load(Ordering::SeqCst) {
            std::thread::park();
        }
        idle = 0;
    }
}

/// Note every watched thread's count in `seen`, first signalling (when
/// `signal`) those in the call they were in at the last look. Whether any
/// is in a call or has made one since.
fn look(seen: &mut Vec<(Weak<Watch>, u64)>, signal: bool) -> bool {
    let list = lock();
    let mut busy = false;
    let mut now = Vec::with_capacity(list.len());
    for weak in list.iter() {
        let Some(watch) = weak.upgrade() else {
            continue;
        };
        let calls = watch.calls.load(Ordering::SeqCst);
        let before = seen.iter().find(|(w, _)| w.ptr_eq(weak)).map(|s| s.1);
        if signal && calls % 2 == 1 && before == Some(calls) {
            // SAFETY: the thread is alive: it leaves the list, under this
            // lock, before it exits.
            unsafe { libc::pthread_kill(watch.thread, ARM_SIGNAL) };
        }
        busy |= calls % 2 == 1 || before != Some(calls);
        now.push((weak.clone(), calls));
    }
    drop(list);
    *seen = now;
    busy
}
