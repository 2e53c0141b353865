//! The thread PostgreSQL connections live on. A worker's own event loop
//! cannot drive them: where a script cannot suspend (inside `db.batch`,
//! while the app loads) its query blocks the worker, and a connection driven
//! by that same loop would then never answer. On this runtime the
//! connections make progress on their own; workers only wait on channels,
//! whether they await a query or block on it.

use std::sync::OnceLock;

use tokio::runtime::{Builder, Runtime};

/// The process's PostgreSQL I/O runtime (one thread, made on first use).
pub(crate) fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("cove-pg")
            .enable_all()
            .build()
            .expect("cannot start the PostgreSQL I/O thread")
    })
}
