//! Replacing every worker's handler with a freshly built one without closing
//! the listeners (`cove dev`).
//!
//! A reload is two-phase, so that all workers always serve the same version:
//! [`Reload::reload`] asks every worker to build a new handler (a new script
//! VM) next to the one it serves; only if every worker succeeded are they
//! told to switch, otherwise the new ones are dropped and the error returned.
//! Each worker builds on its own thread, in a task on its event loop
//! (script VMs cannot move between threads), so idle workers switch too.
//! Requests already running keep their `Rc` to the old handler and finish on
//! it; the old VM is dropped with its last request.
//!
//! While a worker holds two versions (from the build until the old one's
//! last request or connection has finished), both run with group commit
//! paused ([`Handler::pause_group_commit`]): each is its own database
//! connection on the one thread, and a write group one of them held open
//! across an await would make the other's write wait on the write lock
//! forever, on the very thread that would commit it.
//!
//! `cove dev` and server mode (SIGHUP, `cove serve`) both serve through
//! this; a request costs one `RefCell` borrow and an `Rc` clone.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use tokio::sync::watch;

use crate::convert::HttpResponse;
use crate::Handler;

/// How long a reload waits for the workers (one busy in a long handler answers late).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a worker looks whether the version it switched away from is
/// still in use.
const RETIRE_CHECK: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Idle,
    Build(u64),
    Switch(u64),
    Discard(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Built,
    Switched,
}

#[derive(Debug)]
struct Answer {
    round: u64,
    phase: Phase,
    result: Result<(), String>,
}

#[derive(Debug, Default)]
struct State {
    /// Workers whose reload task has started / is still running.
    started: usize,
    live: usize,
    round: u64,
    answers: Vec<Answer>,
    /// Set by [`Reload::stop`]: nothing more is waited for.
    stopped: bool,
}

#[derive(Debug)]
struct Shared {
    workers: usize,
    command: watch::Sender<Command>,
    state: Mutex<State>,
    answered: Condvar,
}

/// The reload controller, shared by whoever decides to reload and the
/// worker factory made by [`reloading`].
#[derive(Debug, Clone)]
pub struct Reload(Arc<Shared>);

impl Reload {
    /// For a server of `workers` workers.
    pub fn new(workers: usize) -> Reload {
        Reload(Arc::new(Shared {
            workers: workers.max(1),
            command: watch::Sender::new(Command::Idle),
            state: Mutex::default(),
            answered: Condvar::new(),
        }))
    }

    /// Once the server has returned: a reload in progress or to come stops
    /// waiting for workers (they are gone, or never started).
    pub fn stop(&self) {
        self.0.lock().stopped = true;
        self.0.answered.notify_all();
    }

    /// Have every worker build a new handler and, if all could, switch to it.
    /// Blocks until they have switched. On error (a build failed or a worker
    /// did not answer in time) every worker keeps its current handler.
    pub fn reload(&self) -> Result<(), String> {
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        let shared = &self.0;
        let mut state = shared.lock();
        // A change seen while the server is still starting waits for it.
        state = shared.wait(state, deadline, |s| s.started >= shared.workers);
        state.round += 1;
        let round = state.round;
        state.answers.clear();
        shared.command.send_replace(Command::Build(round));
        state = shared.wait(state, deadline, |s| s.count(round, Phase::Built) >= s.live);
        let mut errors: Vec<String> = Vec::new();
        for answer in &state.answers {
            if let Err(msg) = &answer.result {
                if !errors.contains(msg) {
                    errors.push(msg.clone());
                }
            }
        }
        if state.live == 0 || state.stopped {
            errors.push("the server is stopping".to_string());
        } else if errors.is_empty() && state.count(round, Phase::Built) < state.live {
            errors.push(format!(
                "a worker did not answer within {} s",
                ANSWER_TIMEOUT.as_secs()
            ));
        }
        if !errors.is_empty() {
            shared.command.send_replace(Command::Discard(round));
            return Err(errors.join("; "));
        }
        shared.command.send_replace(Command::Switch(round));
        // Waited for so that, once this returns, every request gets the new version.
        drop(shared.wait(state, deadline, |s| {
            s.count(round, Phase::Switched) >= s.live
        }));
        Ok(())
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a worker panicked mid-answer; the
        // counts are still meaningful.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait until `done` holds or the deadline passes.
    fn wait<'a>(
        &self,
        mut state: MutexGuard<'a, State>,
        deadline: Instant,
        done: impl Fn(&State) -> bool,
    ) -> MutexGuard<'a, State> {
        while !done(&state) && !state.stopped {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = match self.answered.wait_timeout(state, left) {
                Ok((s, _)) => s,
                Err(e) => e.into_inner().0,
            };
        }
        state
    }

    fn answer(&self, round: u64, phase: Phase, result: Result<(), String>) {
        let mut state = self.lock();
        if state.round == round {
            state.answers.push(Answer {
                round,
                phase,
                result,
            });
        }
        drop(state);
        self.answered.notify_all();
    }
}

impl State {
    fn count(&self, round: u64, phase: Phase) -> usize {
        self.answers
            .iter()
            .filter(|a| a.round == round && a.phase == phase)
            .count()
    }
}

/// Counts a worker's reload task as live while it runs.
struct Live(Arc<Shared>);

impl Live {
    fn new(shared: Arc<Shared>) -> Live {
        let mut state = shared.lock();
        state.started += 1;
        state.live += 1;
        drop(state);
        shared.answered.notify_all();
        Live(shared)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.lock().live -= 1;
        // A reload waiting for this worker's answer stops waiting.
        self.0.answered.notify_all();
    }
}

/// A worker's handler that [`Reload::reload`] can replace.
pub struct Reloading<H, F> {
    worker: usize,
    reload: Reload,
    make: Arc<F>,
    current: RefCell<Rc<H>>,
    /// Built in this round, waiting for the switch.
    next: RefCell<Option<(u64, H)>>,
    /// Versions switched away from whose requests or connections still run.
    retiring: Cell<usize>,
}

/// Wrap the handler factory `make` for [`crate::serve`]: each worker gets a
/// [`Reloading`] that calls `make` again on that worker's thread at every
/// [`Reload::reload`].
pub fn reloading<H, F>(
    reload: Reload,
    make: F,
) -> impl Fn(usize) -> Result<Reloading<H, F>, String> + Send + Sync + 'static
where
    H: Handler,
    F: Fn(usize) -> Result<H, String> + Send + Sync + 'static,
{
    let make = Arc::new(make);
    move |worker| {
        Ok(Reloading {
            worker,
            reload: reload.clone(),
            current: RefCell::new(Rc::new(make(worker)?)),
            next: RefCell::new(None),
            retiring: Cell::new(0),
            make: make.clone(),
        })
    }
}

impl<H, F> Reloading<H, F>
where
    H: Handler,
    F: Fn(usize) -> Result<H, String> + 'static,
{
    /// Carry out the controller's commands until the server stops.
    async fn follow(self: Rc<Self>) {
        let shared = self.reload.0.clone();
        // Subscribe before counting as live: the first command the
        // controller sends after seeing this worker live is then a change.
        let mut commands = shared.command.subscribe();
        let _live = Live::new(shared.clone());
        while commands.changed().await.is_ok() {
            let command = *commands.borrow_and_update();
            match command {
                Command::Build(round) => {
                    self.current.borrow().pause_group_commit(true);
                    let built = (self.make)(self.worker).map(|h| {
                        h.pause_group_commit(true);
                        *self.next.borrow_mut() = Some((round, h));
                    });
                    if built.is_err() {
                        self.resume_if_alone();
                    }
                    shared.answer(round, Phase::Built, built);
                }
                Command::Switch(round) => {
                    let next = self.next.borrow_mut().take();
                    if let Some((built, handler)) = next {
                        if built == round {
                            let handler = Rc::new(handler);
                            handler.start();
                            let old = std::mem::replace(&mut *self.current.borrow_mut(), handler);
                            self.retire(old);
                        }
                    }
                    shared.answer(round, Phase::Switched, Ok(()));
                }
                Command::Discard(_) => {
                    drop(self.next.borrow_mut().take());
                    self.resume_if_alone();
                }
                Command::Idle => {}
            }
        }
    }

    /// Drop `old` once its last request or connection has finished, then
    /// resume group commit if no other version is left.
    fn retire(self: &Rc<Self>, old: Rc<H>) {
        self.retiring.set(self.retiring.get() + 1);
        let this = self.clone();
        tokio::task::spawn_local(async move {
            while Rc::strong_count(&old) > 1 {
                tokio::time::sleep(RETIRE_CHECK).await;
            }
            drop(old);
            this.retiring.set(this.retiring.get() - 1);
            this.resume_if_alone();
        });
    }

    /// Resume group commit once the current version is the only one.
    fn resume_if_alone(&self) {
        if self.retiring.get() == 0 && self.next.borrow().is_none() {
            self.current.borrow().pause_group_commit(false);
        }
    }

    #[cfg(test)]
    fn current(&self) -> Rc<H> {
        self.current.borrow().clone()
    }
}

impl<H, F> Handler for Reloading<H, F>
where
    H: Handler,
    F: Fn(usize) -> Result<H, String> + 'static,
{
    async fn handle(
        self: Rc<Self>,
        req: hyper::Request<Incoming>,
        peer: std::net::SocketAddr,
    ) -> HttpResponse {
        // Cloned out so the borrow ends before the request awaits anything.
        let handler = self.current.borrow().clone();
        handler.handle(req, peer).await
    }

    fn start(self: &Rc<Self>) {
        self.current.borrow().start();
        tokio::task::spawn_local(self.clone().follow());
    }
}

#[cfg(test)]
mod tests;
