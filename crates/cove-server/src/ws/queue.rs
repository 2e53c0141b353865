//! One connection's outgoing queue: what the app sends and what its topics
//! receive, bounded; control frames (pings) ahead of them, unbounded but
//! few; and, once the connection is closing, the close frame to send.
//!
//! Filled by the connection's own driver (the app's commands) and by the
//! worker's [`Live`](crate::live::Live) registry (published messages);
//! emptied by the driver's writer. A full queue means the client reads more
//! slowly than messages arrive: the queue drops what it holds and closes
//! with 1008, rather than grow without bound.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Poll, Waker};

use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::Message;

use super::frame::Frame;

/// Close code for a client that cannot keep up (policy violation).
pub(crate) const TOO_SLOW: u16 = 1008;

/// What the writer takes next.
#[derive(Debug)]
pub(crate) enum Next {
    /// Frames or control frames wait.
    Out,
    /// Send this close frame, then nothing more.
    Close(u16, String),
}

/// What became of a message offered to the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    Queued,
    /// The queue was full: the connection is now closing with 1008.
    TooSlow,
    /// The connection is closing or gone: nothing more is sent.
    Closed,
}

/// A connection's queue; clones share it.
#[derive(Clone)]
pub(crate) struct Queue(Rc<Inner>);

struct Inner {
    items: RefCell<VecDeque<Frame>>,
    control: RefCell<VecDeque<Message>>,
    cap: usize,
    /// The close frame to send, once closing; taken by the writer.
    close: RefCell<Option<(u16, String)>>,
    closing: Cell<bool>,
    /// The writer is gone (the connection ended): offers are refused.
    gone: Cell<bool>,
    /// The writer, while it waits for work. A waker in a cell, not a
    /// `Notify`: the queue lives on one thread, and `Notify`'s lock and
    /// waiter list cost ~40 instructions a message (measured).
    writer: Cell<Option<Waker>>,
    /// Wakes the reader when closing starts.
    closing_started: Notify,
}

impl Queue {
    pub(crate) fn new(cap: usize) -> Queue {
        Queue(Rc::new(Inner {
            items: RefCell::new(VecDeque::new()),
            control: RefCell::new(VecDeque::new()),
            cap: cap.max(1),
            close: RefCell::new(None),
            closing: Cell::new(false),
            gone: Cell::new(false),
            writer: Cell::new(None),
            closing_started: Notify::new(),
        }))
    }

    /// Queue `out`; a full queue closes the connection with 1008.
    pub(crate) fn push(&self, out: Frame) -> Pushed {
        let inner = &self.0;
        if inner.closing.get() || inner.gone.get() {
            return Pushed::Closed;
        }
        let mut items = inner.items.borrow_mut();
        if items.len() >= inner.cap {
            drop(items);
            self.close(TOO_SLOW, "too slow: the outgoing queue is full", true);
            return Pushed::TooSlow;
        }
        items.push_back(out);
        self.wake_writer();
        Pushed::Queued
    }

    /// Queue a control frame (a ping) ahead of the messages.
    pub(crate) fn push_control(&self, message: Message) {
        if !self.0.closing.get() {
            self.0.control.borrow_mut().push_back(message);
            self.wake_writer();
        }
    }

    /// Start closing with `code` and `reason`: sent after what is queued,
    /// or at once with the queue emptied (`drop_queued`). The first close
    /// wins; later ones do nothing.
    pub(crate) fn close(&self, code: u16, reason: &str, drop_queued: bool) {
        let inner = &self.0;
        if inner.closing.replace(true) {
            return;
        }
        if drop_queued {
            inner.items.borrow_mut().clear();
            inner.control.borrow_mut().clear();
        }
        *inner.close.borrow_mut() = Some((code, reason.to_string()));
        self.wake_writer();
        inner.closing_started.notify_one();
    }

    /// The client's close frame arrived (tungstenite answers it): nothing
    /// more is sent.
    pub(crate) fn peer_closed(&self) {
        let inner = &self.0;
        inner.closing.set(true);
        inner.items.borrow_mut().clear();
        inner.control.borrow_mut().clear();
        inner.closing_started.notify_one();
    }

    pub(crate) fn is_closing(&self) -> bool {
        self.0.closing.get()
    }

    /// The code of the close started, if one was.
    pub(crate) fn close_code(&self) -> Option<(u16, String)> {
        self.0.close.borrow().clone()
    }

    /// Returns once closing has started.
    pub(crate) async fn closing(&self) {
        while !self.0.closing.get() {
            self.0.closing_started.notified().await;
        }
    }

    /// The connection has ended: refuse offers from now on, so the live
    /// registry forgets this queue, and free what it held.
    pub(crate) fn end(&self) {
        self.0.gone.set(true);
        self.0.items.borrow_mut().clear();
        self.0.writer.take();
    }

    pub(crate) fn same(&self, other: &Queue) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    /// The next control frame to send, if one waits.
    pub(crate) fn pop_control(&self) -> Option<Message> {
        self.0.control.borrow_mut().pop_front()
    }

    pub(crate) fn has_control(&self) -> bool {
        !self.0.control.borrow().is_empty()
    }

    /// Move every queued frame into `to`, which is empty: the two queues
    /// trade places, so a batch moves at the cost of one.
    pub(crate) fn take_frames(&self, to: &mut VecDeque<Frame>) {
        std::mem::swap(&mut *self.0.items.borrow_mut(), to);
    }

    /// Nothing waits to be written but the close frame, if any.
    pub(crate) fn is_idle(&self) -> bool {
        self.0.control.borrow().is_empty() && self.0.items.borrow().is_empty()
    }

    /// The writer's next piece of work: frames while any wait, then the
    /// close frame (once; after it, never returns).
    pub(crate) async fn next(&self) -> Next {
        let inner = &self.0;
        poll_fn(|cx| {
            if !self.is_idle() {
                return Poll::Ready(Next::Out);
            }
            if let Some((code, reason)) = inner.close.borrow().clone() {
                // The last thing sent: the writer stops after it.
                return Poll::Ready(Next::Close(code, reason));
            }
            let waker = match inner.writer.take() {
                Some(w) if w.will_wake(cx.waker()) => w,
                _ => cx.waker().clone(),
            };
            inner.writer.set(Some(waker));
            Poll::Pending
        })
        .await
    }

    fn wake_writer(&self) {
        if let Some(waker) = self.0.writer.take() {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Frame {
        Frame::new(bytes::Bytes::copy_from_slice(s.as_bytes()), false)
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    fn taken(q: &Queue) -> Vec<String> {
        let mut frames = VecDeque::new();
        q.take_frames(&mut frames);
        frames
            .iter()
            .map(|f| String::from_utf8(f.payload().to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn control_frames_go_first_and_a_close_waits_for_the_queue() {
        run(async {
            let q = Queue::new(4);
            assert_eq!(q.push(text("a")), Pushed::Queued);
            assert_eq!(q.push(text("b")), Pushed::Queued);
            q.push_control(Message::Ping(Default::default()));
            q.close(1000, "bye", false);
            assert_eq!(q.push(text("c")), Pushed::Closed);
            assert!(matches!(q.next().await, Next::Out));
            assert!(matches!(q.pop_control(), Some(Message::Ping(_))));
            assert_eq!(q.pop_control(), None);
            assert!(matches!(q.next().await, Next::Out));
            assert_eq!(taken(&q), ["a", "b"]);
            assert!(q.is_idle());
            assert!(matches!(q.next().await, Next::Close(1000, r) if r == "bye"));
            q.closing().await;
        });
    }

    #[test]
    fn a_full_queue_closes_with_1008_and_drops_what_it_held() {
        run(async {
            let q = Queue::new(2);
            assert_eq!(q.push(text("a")), Pushed::Queued);
            assert_eq!(q.push(text("b")), Pushed::Queued);
            assert_eq!(q.push(text("c")), Pushed::TooSlow);
            assert!(q.is_idle());
            assert!(q.is_closing());
            assert!(matches!(q.next().await, Next::Close(TOO_SLOW, _)));
            // A later close does not replace the first.
            q.close(1000, "", false);
            assert_eq!(q.close_code().unwrap().0, TOO_SLOW);
        });
    }

    #[test]
    fn taking_frames_frees_the_queue_for_more() {
        let q = Queue::new(2);
        assert_eq!(q.push(text("a")), Pushed::Queued);
        assert_eq!(q.push(text("b")), Pushed::Queued);
        assert_eq!(taken(&q), ["a", "b"]);
        assert_eq!(q.push(text("c")), Pushed::Queued);
        assert_eq!(taken(&q), ["c"]);
    }

    #[test]
    fn an_ended_queue_refuses_offers() {
        let q = Queue::new(2);
        q.end();
        assert_eq!(q.push(text("a")), Pushed::Closed);
        assert!(q.same(&q.clone()));
        assert!(!q.same(&Queue::new(2)));
    }
}
