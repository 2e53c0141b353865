//! Work a script asked for that must not run on the worker's thread: the
//! engine suspends the script, the server runs the job and hands the output
//! back to [`Engine::resume`](crate::Engine::resume).
//!
//! Two kinds: blocking work (a PBKDF2 hash costs tens of milliseconds) runs
//! on the server's blocking pool; a future (a PostgreSQL query, a Redis
//! command, whose connection is driven elsewhere) is awaited on the worker
//! itself, with no thread hop. Where a script cannot suspend (inside
//! `db.batch`, while the app loads, in a test calling a function), either
//! kind runs inline with [`Job::run`].

use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

/// What a job produced; only the engine that made the job knows its type.
pub type JobOutput = Box<dyn Any + Send>;

/// A future a job awaits.
pub type JobFuture = Pin<Box<dyn Future<Output = JobOutput> + Send>>;

/// A unit of work a suspended script waits for.
pub struct Job(Kind);

enum Kind {
    Blocking(Box<dyn FnOnce() -> JobOutput + Send>),
    Future(JobFuture),
}

/// How the server runs a job it was handed.
pub enum JobWork {
    /// Run it on a blocking thread.
    Blocking(Job),
    /// Await it on the worker's own event loop.
    Future(JobFuture),
}

impl Job {
    /// Blocking work, run off the worker's thread.
    pub fn new<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Job {
        Job(Kind::Blocking(Box::new(move || {
            Box::new(work()) as JobOutput
        })))
    }

    /// A future awaited on the worker. It must not need the worker's own
    /// reactor (its I/O is driven on another thread), since [`Job::run`]
    /// may block the worker on it.
    pub fn future<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> Job {
        Job(Kind::Future(Box::pin(async move {
            Box::new(work.await) as JobOutput
        })))
    }

    /// Run it here (on a blocking thread, or inline where stalling is fine).
    pub fn run(self) -> JobOutput {
        match self.0 {
            Kind::Blocking(work) => work(),
            Kind::Future(fut) => block_on(fut),
        }
    }

    /// Where the server should run it.
    pub fn into_work(self) -> JobWork {
        match self.0 {
            Kind::Blocking(_) => JobWork::Blocking(self),
            Kind::Future(fut) => JobWork::Future(fut),
        }
    }
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Kind::Blocking(_) => "Job(blocking)",
            Kind::Future(_) => "Job(future)",
        })
    }
}

/// Wakes the thread that parked in [`block_on`].
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

thread_local! {
    /// How many [`block_on`]s this thread is inside.
    static IN_PLACE: Cell<u32> = const { Cell::new(0) };
}

/// Whether this thread is waiting in place, inside [`block_on`]: a future
/// polled now cannot count on its worker running anything else meanwhile
/// (another request's future, whose unread answer might hold up this one's).
pub fn waiting_in_place() -> bool {
    IN_PLACE.with(|n| n.get() > 0)
}

/// Leaves the in-place state however `block_on` ends.
struct InPlace;

impl InPlace {
    fn enter() -> InPlace {
        IN_PLACE.with(|n| n.set(n.get() + 1));
        InPlace
    }
}

impl Drop for InPlace {
    fn drop(&mut self) {
        IN_PLACE.with(|n| n.set(n.get() - 1));
    }
}

/// Polls `fut` to completion on this thread, parking between wakes.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let _in_place = InPlace::enter();
    let mut fut = std::pin::pin!(fut);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_future_job_runs_inline_when_woken_from_another_thread() {
        let slot = Arc::new(std::sync::Mutex::new(None::<u32>));
        let job = Job::future(async move {
            // Ready only once the other thread has filled the slot and woken us.
            std::future::poll_fn(|cx| {
                if let Some(v) = *slot.lock().unwrap() {
                    return Poll::Ready(v);
                }
                let (waker, slot) = (cx.waker().clone(), slot.clone());
                std::thread::spawn(move || {
                    *slot.lock().unwrap() = Some(7);
                    waker.wake();
                });
                Poll::Pending
            })
            .await
        });
        let out = job.run().downcast::<u32>().unwrap();
        assert_eq!(*out, 7);
    }

    #[test]
    fn a_future_knows_it_is_waited_for_in_place() {
        assert!(!waiting_in_place());
        assert!(block_on(async { waiting_in_place() }));
        assert!(!waiting_in_place());
    }

    #[test]
    fn jobs_say_where_they_run() {
        assert!(matches!(Job::new(|| 1).into_work(), JobWork::Blocking(_)));
        assert!(matches!(
            Job::future(async { 1 }).into_work(),
            JobWork::Future(_)
        ));
    }
}
