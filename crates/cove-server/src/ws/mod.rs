//! WebSocket connections (RFC 6455) over HTTP/1.1 and HTTPS.
//!
//! A handler that routes a request to a WebSocket endpoint hands it to
//! [`Sockets::upgrade`] with the app's [`WsApp`]: the handshake is checked
//! (400 or 426 when it is not one, 503 past the worker's limit) and
//! answered with 101, whose body carries the connection's [`Pending`]
//! driver. The connection's HTTP/1.1 service leaves it with the
//! connection; once hyper has written the 101 and let go of the socket,
//! the connection task takes the socket back and the driver runs on a task
//! of its own on the worker's thread ([`driver`]). tokio-tungstenite reads
//! the client's frames and writes the control frames; data frames are
//! made by [`Frame`] (tungstenite's header, once per message) and written
//! by the connection's [`socket`], many in one write. The app sees
//! [`WsEvent`]s, one at a time per connection, and answers each with
//! [`WsCommand`]s (send, close, subscribe,
//! unsubscribe, publish), applied once it returns. Between two events a
//! connection holds a socket, a [`Queue`] and its subscriptions, nothing
//! of a script VM.
//!
//! Published messages reach a subscribed connection through the worker's
//! [`Live`] registry, the one event streams use, as text frames (binary
//! when [`Published::binary`](cove_core::Published)).

mod driver;
mod frame;
mod handshake;
mod queue;
mod socket;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::FutureExt;
use hyper::upgrade::OnUpgrade;

use cove_core::{Publisher, Request, WsApp, WsConn};
use hyper::http::request::Parts;

use crate::convert::{closing, HttpResponse};
use crate::drain::Watcher;
use crate::io::Io;
use crate::live::{Live, Open, MAX_PER_WORKER};
use crate::Body;

pub(crate) use frame::Frame;
pub(crate) use queue::{Pushed, Queue};

/// The limits of WebSocket connections.
#[derive(Debug, Clone)]
pub struct WsLimits {
    /// Largest message from a client, fragments joined; a larger one
    /// closes the connection with 1009.
    pub max_message: usize,
    /// Largest single frame from a client (also 1009).
    pub max_frame: usize,
    /// Messages queued for one connection (its sends and its topics'
    /// messages) before the client counts as too slow and is closed with
    /// 1008.
    pub queue: usize,
    /// Silence from the client after which a ping is sent.
    pub idle: Duration,
    /// How long a pong (or anything) may take to answer that ping before
    /// the connection is dropped.
    pub pong_timeout: Duration,
    /// How long the client has to answer a close frame (or a close frame
    /// has to get out to a client that does not read).
    pub close_timeout: Duration,
    /// Live connections (event streams and WebSockets together) one worker
    /// holds; an upgrade past it is answered 503.
    pub max_connections: usize,
}

impl Default for WsLimits {
    fn default() -> WsLimits {
        WsLimits {
            max_message: 1 << 20,
            max_frame: 1 << 20,
            queue: 256,
            idle: Duration::from_secs(30),
            pong_timeout: Duration::from_secs(20),
            close_timeout: Duration::from_secs(5),
            max_connections: MAX_PER_WORKER,
        }
    }
}

/// One worker's WebSocket side: its limits, the live registry its
/// connections subscribe in, and the hub their publications go to.
pub(crate) struct Sockets {
    limits: WsLimits,
    live: Rc<Live>,
    publisher: Option<Publisher>,
    next_id: Cell<u64>,
}

impl Sockets {
    pub(crate) fn new(limits: WsLimits, live: Rc<Live>, publisher: Option<Publisher>) -> Sockets {
        Sockets {
            limits,
            live,
            publisher,
            next_id: Cell::new(1),
        }
    }

    /// Send what connections publish with `publisher` (the process's hub).
    pub(crate) fn set_publisher(&mut self, publisher: Publisher) {
        self.publisher = Some(publisher);
    }

    /// Answer `request` (its head taken from `parts`), a request for a
    /// WebSocket endpoint served by `app`: 101, and the connection driven
    /// on this worker from then on; or the refusal (400, 426, 503).
    pub(crate) fn upgrade(
        &self,
        parts: &mut Parts,
        request: Request,
        app: Rc<dyn WsApp>,
    ) -> HttpResponse {
        let accept = match handshake::check(&parts.method, parts.version, &request.headers) {
            Ok(accept) => accept,
            Err(refusal) => return refusal.response(),
        };
        // hyper adds this to HTTP/1.1 requests that ask for an upgrade.
        let Some(on_upgrade) = parts.extensions.remove::<OnUpgrade>() else {
            return handshake::Refusal::Version.response();
        };
        let Some(open) = self.live.open_one(self.limits.max_connections) else {
            return closing(503, "Service Unavailable: too many open connections");
        };
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let conn = WsConn { id, request };
        let driver = driver::Driver {
            conn,
            app,
            queue: Queue::new(self.limits.queue),
            live: self.live.clone(),
            publisher: self.publisher.clone(),
            limits: self.limits.clone(),
            subscribed: Default::default(),
        };
        let mut res = handshake::switching(&accept);
        *res.body_mut() = Body::upgrade(Box::new(Pending {
            driver,
            open,
            on_upgrade,
        }));
        res
    }
}

/// A WebSocket answered with 101, waiting for its socket (conn.rs); if
/// dropped instead, it never opens (the app sees nothing).
pub(crate) struct Pending {
    driver: driver::Driver,
    open: Open,
    /// hyper's side of the upgrade: told that the socket is taken back by
    /// hand once hyper stopped at the 101 (not when the connection ended
    /// otherwise).
    on_upgrade: OnUpgrade,
}

impl Pending {
    /// Run the connection over `io`, the socket hyper wrote the 101 on,
    /// starting with `read`, what hyper read past the request.
    pub(crate) async fn run(self: Box<Self>, io: Io, read: Bytes, watcher: Watcher) {
        let Pending {
            driver,
            open,
            on_upgrade,
        } = *self;
        match on_upgrade.now_or_never() {
            // hyper's word for "stopped at the 101, the socket is yours".
            Some(Err(e)) if e.is_user() => {}
            // The client went away before the 101 went out.
            _ => return,
        }
        driver
            .run(socket::Socket::new(io, read), watcher, open)
            .await;
    }
}

/// The frame `data` goes out in: binary, or text with its bad UTF-8 (if
/// any) replaced. The app's sends and published messages alike; a
/// published one is made once per message and worker and shared by its
/// subscribers (made per delivery, it cost ~145 instructions a delivery,
/// most of them checking the same UTF-8 twice; measured).
pub(crate) fn frame_of(data: Bytes, binary: bool) -> Frame {
    if binary {
        Frame::new(data, true)
    } else {
        Frame::new(text(data), false)
    }
}

/// `data` as a text frame's payload: as it is when it is UTF-8, else with
/// its bad bytes replaced.
fn text(data: Bytes) -> Bytes {
    match std::str::from_utf8(&data) {
        Ok(_) => data,
        Err(_) => Bytes::from(String::from_utf8_lossy(&data).into_owned()),
    }
}

#[cfg(test)]
mod tests;
