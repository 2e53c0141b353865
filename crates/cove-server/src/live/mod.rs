//! Long-lived connections on one worker: Server-Sent Events streams and
//! WebSocket connections (ws/), subscribed to topics, fed by the process's
//! pub/sub hub.
//!
//! [`Live`] keeps, per topic, the queues of this worker's subscribers. A
//! task reads the worker's [`Feed`] and offers each message to the queues
//! of its topic's subscribers; a subscriber whose queue is full (a client
//! that reads more slowly than messages arrive) is dropped and counted,
//! rather than buffering without bound. A subscriber that went away is
//! forgotten the next time its topic has a message.

mod events_body;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use tokio::sync::{broadcast, mpsc};

use cove_core::{log, published_so_far, EventStream, Feed, Published};

use crate::convert::{closing, HttpResponse};
use crate::ws::{Frame, Pushed, Queue};
use crate::Body;

pub(crate) use events_body::EventsBody;

/// Messages queued for one subscriber before it counts as too slow.
pub const QUEUE: usize = 256;

/// Live connections one worker holds at most; more are answered 503.
pub const MAX_PER_WORKER: usize = 10_000;

/// A queue of messages for one subscriber, and the number of the last
/// message published before it subscribed ([`published_so_far`]): that one
/// and those before it are not for it, even when this worker's feed hands
/// them on after it subscribed.
enum Sink {
    /// An event stream's.
    Stream(mpsc::Sender<Arc<Published>>, u64),
    /// A WebSocket connection's (its length bounded by its own limit).
    Socket(Queue, u64),
}

/// What became of a message offered to a subscriber.
enum Offer {
    Taken,
    TooSlow,
    Gone,
}

impl Sink {
    /// Offer `message`; `as_ws` is it as a WebSocket frame, made on the
    /// first socket's offer and shared by the rest.
    fn offer(&self, message: &Arc<Published>, as_ws: &mut Option<Frame>) -> Offer {
        match self {
            Sink::Stream(_, since) | Sink::Socket(_, since) if message.seq <= *since => {
                Offer::Taken
            }
            Sink::Stream(tx, _) => match tx.try_send(message.clone()) {
                Ok(()) => Offer::Taken,
                Err(mpsc::error::TrySendError::Full(_)) => Offer::TooSlow,
                Err(mpsc::error::TrySendError::Closed(_)) => Offer::Gone,
            },
            Sink::Socket(queue, _) => {
                let ws = as_ws.get_or_insert_with(|| {
                    crate::ws::frame_of(message.data.clone(), message.binary)
                });
                match queue.push(ws.clone()) {
                    Pushed::Queued => Offer::Taken,
                    Pushed::TooSlow => Offer::TooSlow,
                    Pushed::Closed => Offer::Gone,
                }
            }
        }
    }
}

/// One worker's subscribers.
pub(crate) struct Live {
    topics: RefCell<HashMap<Arc<str>, Vec<Sink>>>,
    /// Open streams (each holds one [`Open`] guard).
    open: Rc<Cell<usize>>,
    /// Subscribers dropped for being too slow, and messages this worker
    /// missed by falling behind the hub.
    dropped_slow: Cell<u64>,
    lost: Cell<u64>,
    /// The comment line sent on an idle stream, so that proxies and the
    /// idle timeout do not close it.
    heartbeat: Duration,
    /// `--metrics`: `cove_live_connections` of this worker.
    gauge: Option<metrics::Gauge>,
}

/// Counts one open stream until dropped.
pub(crate) struct Open(Rc<Cell<usize>>, Option<metrics::Gauge>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
        if let Some(gauge) = &self.1 {
            gauge.decrement(1.0);
        }
    }
}

impl Live {
    /// `idle`: the connections' idle timeout; heartbeats come at least twice
    /// within it.
    pub(crate) fn new(idle: Duration) -> Live {
        Live {
            topics: RefCell::default(),
            open: Rc::default(),
            dropped_slow: Cell::new(0),
            lost: Cell::new(0),
            heartbeat: (idle / 2).min(Duration::from_secs(15)),
            gauge: crate::metrics::live_gauge(),
        }
    }

    /// Follow `feed` on this worker's event loop until the hub closes it,
    /// or this registry is dropped (`cove dev` replaced the handler).
    pub(crate) fn follow(self: &Rc<Self>, mut feed: Feed) {
        let weak = Rc::downgrade(self);
        tokio::task::spawn_local(async move {
            loop {
                let received = feed.recv().await;
                let Some(me) = weak.upgrade() else { return };
                match received {
                    Ok(message) => me.deliver(&message),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        me.lost.set(me.lost.get() + n);
                        log::warn(&format!(
                            "live: this worker fell behind the published messages and lost {n}"
                        ));
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    /// Offer `message` to the subscribers of its topic.
    pub(crate) fn deliver(&self, message: &Arc<Published>) {
        let mut topics = self.topics.borrow_mut();
        let Some(sinks) = topics.get_mut(&message.topic) else {
            return;
        };
        let mut slow = 0;
        let mut as_ws = None;
        sinks.retain(|sink| match sink.offer(message, &mut as_ws) {
            Offer::Taken => true,
            Offer::TooSlow => {
                slow += 1;
                false
            }
            Offer::Gone => false,
        });
        if sinks.is_empty() {
            topics.remove(&message.topic);
        }
        if slow > 0 {
            self.dropped_slow.set(self.dropped_slow.get() + slow);
            log::warn(&format!(
                "live: dropped {slow} subscriber(s) of {:?} that read too slowly (their queues were full)",
                message.topic
            ));
        }
    }

    /// A queue subscribed to `topics`, and the guard that counts it open;
    /// `None` when the worker holds [`MAX_PER_WORKER`] already.
    fn subscribe(&self, topics: &[String]) -> Option<(mpsc::Receiver<Arc<Published>>, Open)> {
        let open = self.open_one(MAX_PER_WORKER)?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let since = published_so_far();
        let mut map = self.topics.borrow_mut();
        for topic in topics {
            map.entry(topic.as_str().into())
                .or_default()
                .push(Sink::Stream(tx.clone(), since));
        }
        Some((rx, open))
    }

    /// Count one more live connection (event stream or WebSocket), unless
    /// the worker holds `max` already.
    pub(crate) fn open_one(&self, max: usize) -> Option<Open> {
        if self.open.get() >= max {
            return None;
        }
        self.open.set(self.open.get() + 1);
        if let Some(gauge) = &self.gauge {
            gauge.increment(1.0);
        }
        Some(Open(self.open.clone(), self.gauge.clone()))
    }

    /// Send what is published to `topic` to a WebSocket's `queue` too (once,
    /// however often it subscribes).
    pub(crate) fn subscribe_socket(&self, topic: &str, queue: &Queue) {
        let mut map = self.topics.borrow_mut();
        let sinks = map.entry(topic.into()).or_default();
        let known = sinks
            .iter()
            .any(|s| matches!(s, Sink::Socket(q, _) if q.same(queue)));
        if !known {
            sinks.push(Sink::Socket(queue.clone(), published_so_far()));
        }
    }

    /// Stop sending `topic`'s messages to `queue`.
    pub(crate) fn unsubscribe_socket(&self, topic: &str, queue: &Queue) {
        let mut map = self.topics.borrow_mut();
        let Some(sinks) = map.get_mut(topic) else {
            return;
        };
        sinks.retain(|s| !matches!(s, Sink::Socket(q, _) if q.same(queue)));
        if sinks.is_empty() {
            map.remove(topic);
        }
    }

    /// A subscriber dropped for being too slow, found elsewhere than in
    /// [`Live::deliver`] (a WebSocket's queue filled by its own sends).
    pub(crate) fn count_slow(&self) {
        self.dropped_slow.set(self.dropped_slow.get() + 1);
    }

    /// The response `res` (already converted) as an event stream carrying
    /// `stream`'s first events, then its topics' messages.
    pub(crate) fn events(&self, stream: EventStream, mut res: HttpResponse) -> HttpResponse {
        let Some((rx, open)) = self.subscribe(&stream.topics) else {
            return closing(503, "Service Unavailable: too many open event streams");
        };
        let headers = res.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        // nginx would otherwise hold events back in its buffer.
        headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
        *res.body_mut() = Body::events(EventsBody::new(stream.first, rx, open, self.heartbeat));
        res
    }

    /// Subscribers dropped for being too slow, and messages lost by this
    /// worker falling behind (read by the tests; the metrics to come).
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (u64, u64) {
        (self.dropped_slow.get(), self.lost.get())
    }
}

#[cfg(test)]
mod tests;
