//! The process-wide I/O thread. Connections to network services
//! (PostgreSQL, Redis) are driven here rather than on a worker's runtime: a worker may block on
//! a reply where its script cannot suspend (`cove_core::Job::run`), and a
//! connection driven by that same worker's reactor would then never answer.
//! A worker only waits on the reply of a task spawned here, which any
//! executor (or a plain parked thread) can await.

use std::sync::OnceLock;

use tokio::runtime::{Builder, Runtime};

/// The runtime of the `cove-io` thread, started on first use and kept for
/// the life of the process. One thread suffices: it only shuttles bytes.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("cove-io")
            .enable_all()
            .build()
            // Only fails when the OS refuses a thread or an epoll instance.
            .expect("cannot start the cove-io thread")
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn tasks_run_on_the_io_thread_and_any_thread_can_wait() {
        let task =
            super::runtime().spawn(async { std::thread::current().name().map(str::to_string) });
        let name = crate::block_on(task).unwrap();
        assert_eq!(name.as_deref(), Some("cove-io"));
    }
}
