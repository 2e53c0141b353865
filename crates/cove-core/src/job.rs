//! Work a script asked for that must not run on the worker's thread (a
//! PBKDF2 hash costs tens of milliseconds): the engine suspends the script,
//! the server runs the job on its blocking pool and hands the output back
//! to [`Engine::resume`](crate::Engine::resume).

use std::any::Any;

/// What a job produced; only the engine that made the job knows its type.
pub type JobOutput = Box<dyn Any + Send>;

/// A unit of blocking work.
pub struct Job(Box<dyn FnOnce() -> JobOutput + Send>);

impl Job {
    pub fn new<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Job {
        Job(Box::new(move || Box::new(work()) as JobOutput))
    }

    /// Run it here (on a blocking thread, or inline where stalling is fine).
    pub fn run(self) -> JobOutput {
        (self.0)()
    }
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}
