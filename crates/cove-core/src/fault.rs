//! Faults that are not the script's: a database or store that cannot be
//! reached. A handler that fails because of one answers 503 with
//! `Retry-After` (try again soon) instead of 500 (a bug to fix).
//!
//! The backend notes the fault on the worker's thread as it hands the error
//! to the script (a query awaited for a suspended call notes it just before
//! that call resumes); the pipeline clears the note before each new call and
//! takes it after every call or resume. Nothing else runs on the worker in
//! between, so the note belongs to the call that failed.

use std::cell::Cell;

thread_local! {
    static UNAVAILABLE: Cell<bool> = const { Cell::new(false) };
}

/// A backend could not be reached while serving the current call.
pub fn note_unavailable() {
    UNAVAILABLE.with(|u| u.set(true));
}

pub(crate) fn clear() {
    UNAVAILABLE.with(|u| u.set(false));
}

/// Whether the current call met an unreachable backend (and forget it).
pub(crate) fn take() -> bool {
    UNAVAILABLE.with(|u| u.replace(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_read_once() {
        clear();
        assert!(!take());
        note_unavailable();
        assert!(take());
        assert!(!take());
    }
}
