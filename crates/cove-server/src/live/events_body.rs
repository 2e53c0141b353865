//! The body of an event stream: its first events, then each message its
//! queue receives as an event named after the topic, and a comment line
//! whenever it has been quiet for a heartbeat. It ends when the queue is
//! closed (the subscriber was dropped as too slow, or the server stops).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

use cove_core::Published;

use super::Open;

pub(crate) struct EventsBody {
    first: VecDeque<Bytes>,
    rx: mpsc::Receiver<Arc<Published>>,
    _open: Open,
    heartbeat: Duration,
    quiet: Pin<Box<Sleep>>,
}

impl EventsBody {
    pub(super) fn new(
        first: Vec<Bytes>,
        rx: mpsc::Receiver<Arc<Published>>,
        open: Open,
        heartbeat: Duration,
    ) -> EventsBody {
        EventsBody {
            first: first.into(),
            rx,
            _open: open,
            heartbeat,
            quiet: Box::pin(tokio::time::sleep(heartbeat)),
        }
    }

    /// The next bytes to send, `None` at the end.
    pub(crate) fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if let Some(first) = self.first.pop_front() {
            return Poll::Ready(Some(first));
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(m)) => {
                self.quiet.as_mut().reset(Instant::now() + self.heartbeat);
                // Text as it is; binary data has no place in an event and is
                // sent as its lossy UTF-8 text.
                let data = String::from_utf8_lossy(&m.data);
                let event =
                    cove_core::event(Some(&m.topic), None, data.as_bytes()).unwrap_or_else(|_| {
                        cove_core::event(None, None, data.as_bytes()).unwrap_or_default()
                    });
                Poll::Ready(Some(event))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                if self.quiet.as_mut().poll(cx).is_ready() {
                    self.quiet.as_mut().reset(Instant::now() + self.heartbeat);
                    return Poll::Ready(Some(Bytes::from_static(b":\n\n")));
                }
                Poll::Pending
            }
        }
    }
}
