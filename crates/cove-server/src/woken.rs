//! A future polled only after its own waker fired.
//!
//! `tokio::select!` polls every branch each time its task wakes, and a
//! connection's task wakes for every message or request: a WebSocket's
//! shutdown watch, idle timer, writer handle and close notice were polled
//! each time, ~470 instructions a message between them (callgrind), and an
//! HTTP connection's drain watch ~160 a request, though none had anything
//! to say. Wrapped, each is polled again only once its waker has
//! fired (or it was changed through [`Woken::get_mut`]): an atomic swap and
//! a waker comparison instead.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

pub(crate) struct Woken<F> {
    inner: F,
    flag: Arc<Flag>,
    /// `flag` as a waker, made once.
    waker: Waker,
}

struct Flag {
    woken: AtomicBool,
    /// The task polling the wrapper, woken in turn.
    task: AtomicWaker,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl<F: Future + Unpin> Woken<F> {
    pub(crate) fn new(inner: F) -> Self {
        let flag = Arc::new(Flag {
            // Polled the first time, which registers its waker.
            woken: AtomicBool::new(true),
            task: AtomicWaker::new(),
        });
        let waker = Waker::from(flag.clone());
        Woken { inner, flag, waker }
    }

    /// The future, to change what it waits for (a timer reset): it is
    /// polled at the next poll, which registers the change.
    pub(crate) fn get_mut(&mut self) -> &mut F {
        self.flag.woken.store(true, Ordering::Release);
        &mut self.inner
    }
}

impl<F: Future + Unpin> Future for Woken<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        // Before the swap: a wake between the two then finds this task.
        this.flag.task.register(cx.waker());
        if !this.flag.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll(&mut Context::from_waker(&this.waker))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;
    use std::time::Duration;

    /// Pending until `ready`, counting its polls; keeps the last waker.
    struct Probe {
        polls: Rc<Cell<u32>>,
        ready: Rc<Cell<bool>>,
        waker: Rc<Cell<Option<Waker>>>,
    }

    impl Future for Probe {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.set(self.polls.get() + 1);
            self.waker.set(Some(cx.waker().clone()));
            if self.ready.get() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }
    }

    /// A probe, and handles on its poll count, readiness and last waker.
    #[allow(clippy::type_complexity)]
    fn probe() -> (
        Probe,
        Rc<Cell<u32>>,
        Rc<Cell<bool>>,
        Rc<Cell<Option<Waker>>>,
    ) {
        let (polls, ready, waker): (Rc<Cell<u32>>, Rc<Cell<bool>>, Rc<Cell<Option<Waker>>>) =
            Default::default();
        let probe = Probe {
            polls: Rc::clone(&polls),
            ready: Rc::clone(&ready),
            waker: Rc::clone(&waker),
        };
        (probe, polls, ready, waker)
    }

    #[test]
    fn the_inner_future_is_polled_only_after_its_wake() {
        let (probe, polls, ready, waker) = probe();
        let mut woken = Woken::new(probe);
        let (task_woken, task) = counting_waker();
        let mut cx = Context::from_waker(&task);
        for _ in 0..5 {
            assert!(Pin::new(&mut woken).poll(&mut cx).is_pending());
        }
        assert_eq!(polls.get(), 1, "polled once, to register its waker");
        ready.set(true);
        assert!(Pin::new(&mut woken).poll(&mut cx).is_pending());
        assert_eq!(polls.get(), 1, "ready, but not woken: not polled");
        let inner = waker.take().expect("the inner future's waker");
        inner.wake();
        assert_eq!(task_woken.load(Ordering::Acquire), 1, "the task is woken");
        assert!(Pin::new(&mut woken).poll(&mut cx).is_ready());
        assert_eq!(polls.get(), 2);
    }

    #[test]
    fn a_change_through_get_mut_is_polled() {
        let (probe, polls, _, _) = probe();
        let mut woken = Woken::new(probe);
        let (_, task) = counting_waker();
        let mut cx = Context::from_waker(&task);
        assert!(Pin::new(&mut woken).poll(&mut cx).is_pending());
        woken.get_mut().ready.set(true);
        assert!(Pin::new(&mut woken).poll(&mut cx).is_ready());
        assert_eq!(polls.get(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_reset_timer_fires_at_its_new_time() {
        let start = tokio::time::Instant::now();
        let mut timer = Woken::new(Box::pin(tokio::time::sleep(Duration::from_secs(60))));
        tokio::select! {
            biased;
            () = &mut timer => panic!("fired early"),
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        timer
            .get_mut()
            .as_mut()
            .reset(start + Duration::from_secs(5));
        (&mut timer).await;
        assert_eq!(start.elapsed(), Duration::from_secs(5));
    }

    fn counting_waker() -> (Arc<std::sync::atomic::AtomicU32>, Waker) {
        struct Count(Arc<std::sync::atomic::AtomicU32>);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::AcqRel);
            }
        }
        let n = Arc::new(std::sync::atomic::AtomicU32::new(0));
        (n.clone(), Waker::from(Arc::new(Count(n))))
    }
}
