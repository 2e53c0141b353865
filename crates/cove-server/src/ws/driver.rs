//! One WebSocket connection, from the 101 to its end, on the worker's
//! thread.
//!
//! Two halves run in one task. The reader takes the client's messages and
//! hands each to the app in turn (the next is not read until the app has
//! answered, so a client that sends faster than the app handles waits on
//! TCP), applies the app's commands, sends a ping after `idle` of silence,
//! and starts the close on server shutdown (1001). The writer empties the
//! connection's [`Queue`] onto the socket: control frames through
//! tungstenite, data frames handed to the socket all at once, one flush
//! for all; the close frame last.
//!
//! Ending: a client's close frame is answered (by tungstenite) and ends
//! the connection; a close the server starts (the app, 1001, 1008, 1009)
//! waits up to `close_timeout` for the client's answer; a missing pong or a
//! broken socket ends it at once. The app's last event is its `Close`.

use std::cell::RefCell;
use std::collections::HashSet;
use std::future::poll_fn;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::task::{ready, Context, Poll};

use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWrite;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

use cove_core::{check_close, check_topic, log, Publisher, WsApp, WsCommand, WsConn, WsEvent};

use super::queue::{Next, Pushed, Queue};
use super::socket::Socket;
use super::WsLimits;
use crate::drain::Watcher;
use crate::live::{Live, Open};
use crate::woken::Woken;

type Ws = WebSocketStream<Socket>;

/// The connection's stream, shared by its reader and its writer task on
/// the worker's thread. Each borrows it only inside a poll, so the two
/// never hold it at once; tokio-tungstenite wakes each for its own
/// direction. (`StreamExt::split` puts a `BiLock` around the stream: atomic
/// operations and a future per message sent, ~200 instructions a delivery,
/// measured.)
type Shared = Rc<RefCell<Ws>>;

/// Close code for a message over the limit.
const TOO_BIG: u16 = 1009;
/// Close code on server shutdown.
const GOING_AWAY: u16 = 1001;
/// Close code the app sees when no close frame came (never sent).
const ABNORMAL: u16 = 1006;
/// Close code the app sees for a close frame without one (never sent).
const NO_STATUS: u16 = 1005;

/// Most bytes tungstenite reads from the socket at once. It zeroes this
/// much of its buffer before every read: at its default (128 KiB) that was
/// ~220k instructions a message on a 32-byte echo (callgrind), and at
/// 8 KiB still ~10% of the user time; a larger message is read in bulk by
/// the socket (socket.rs) and handed over from there.
const READ_CHUNK: usize = 2 * 1024;

/// Topics one connection may subscribe to.
const MAX_TOPICS: usize = cove_core::MAX_EVENT_TOPICS;

/// Everything one connection holds between events.
pub(super) struct Driver {
    pub(super) conn: WsConn,
    pub(super) app: std::rc::Rc<dyn WsApp>,
    pub(super) queue: Queue,
    pub(super) live: std::rc::Rc<Live>,
    pub(super) publisher: Option<Publisher>,
    pub(super) limits: WsLimits,
    pub(super) subscribed: HashSet<String>,
}

/// How the reader stopped.
#[derive(Debug)]
enum Ended {
    /// The client's close frame (answered): its code and reason.
    Peer(u16, String),
    /// The socket ended or broke without a close frame.
    Broken,
    /// A message over the limit: the close (1009) is queued, the socket no
    /// longer readable.
    TooBig,
    /// No answer to a ping.
    NoPong,
}

impl Driver {
    /// `open` counts the connection among the worker's live ones until
    /// its socket is closed.
    pub(super) async fn run(mut self, socket: Socket, watcher: Watcher, open: Open) {
        let config = WebSocketConfig::default()
            .max_message_size(Some(self.limits.max_message))
            .max_frame_size(Some(self.limits.max_frame))
            .read_buffer_size(READ_CHUNK);
        let socket = WebSocketStream::from_raw_socket(socket, Role::Server, Some(config)).await;
        let stream: Shared = Rc::new(RefCell::new(socket));
        let queue = self.queue.clone();
        let close_timeout = self.limits.close_timeout;

        self.event(WsEvent::Open).await;
        // A task of its own: a published message wakes only the writer, not
        // the reader too (which, polled, asks the socket for more and has
        // tungstenite clear its read buffer first).
        let mut writer = tokio::task::spawn_local(write(stream.clone(), queue.clone()));
        let mut writer_done = false;
        let mut ended = None;
        {
            let mut reader = pin!(self.read(stream, watcher));
            // Polled only when they wake, not at every message (woken.rs).
            let mut writing = Woken::new(&mut writer);
            let mut deadline: Option<Instant> = None;
            loop {
                let wait = deadline.unwrap_or_else(far_future);
                tokio::select! {
                    out = &mut reader, if ended.is_none() => {
                        let wait_for_close = matches!(out, Ended::TooBig) && !writer_done;
                        ended = Some(out);
                        if !wait_for_close {
                            break;
                        }
                        deadline.get_or_insert(Instant::now() + close_timeout);
                    }
                    sent = &mut writing, if !writer_done => {
                        writer_done = true;
                        if !sent.unwrap_or(false) || ended.is_some() {
                            break;
                        }
                    }
                    () = Woken::new(Box::pin(queue.closing())), if deadline.is_none() => {
                        deadline = Some(Instant::now() + close_timeout);
                    }
                    () = tokio::time::sleep_until(wait), if deadline.is_some() => break,
                }
            }
        }
        if !writer_done {
            // Drops the socket's write half (the reader's went above).
            writer.abort();
            let _ = writer.await;
        }
        let (code, reason) = match ended {
            Some(Ended::Peer(code, reason)) => (code, reason),
            _ => queue.close_code().unwrap_or((ABNORMAL, String::new())),
        };
        queue.end();
        drop(open);
        self.event(WsEvent::Close { code, reason }).await;
        for topic in self.subscribed.drain() {
            self.live.unsubscribe_socket(&topic, &queue);
        }
    }

    /// Read until the client's close, a broken socket, a message over the
    /// limit or a missing pong; hand each message to the app.
    ///
    /// One timer serves the idle ping and the pong's deadline. A message
    /// does not move it: when it fires early (the client spoke since), it
    /// is set again for what is now due, at most once per idle period.
    /// Setting it at every message cost ~600 instructions a message.
    async fn read(&mut self, stream: Shared, mut watcher: Watcher) -> Ended {
        let (idle, pong_timeout) = (self.limits.idle, self.limits.pong_timeout);
        let mut heard = Instant::now();
        let mut pinged: Option<Instant> = None;
        let mut stopped = false;
        let mut peer_close: Option<(u16, String)> = None;
        // Both polled only when they wake, not at every message (woken.rs).
        let timer = pin!(tokio::time::sleep_until(heard + idle));
        let mut timer = Woken::new(timer);
        // The watcher is kept to the end: the drain waits for it.
        let stopping = pin!(watcher.stopping());
        let mut stopping = Woken::new(stopping);
        loop {
            tokio::select! {
                // The socket first, and the others only when it waits: a
                // fair (random) start polled the shutdown watch and the
                // timer before most messages (~300 instructions each). A
                // client sending without pause still lets them run: the
                // socket's reads spend tokio's cooperative budget.
                biased;
                got = poll_fn(|cx| stream.borrow_mut().poll_next_unpin(cx)) => {
                    let message = match got {
                        None => {
                            return match peer_close {
                                Some((code, reason)) => Ended::Peer(code, reason),
                                None => Ended::Broken,
                            }
                        }
                        Some(Err(WsError::Capacity(CapacityError::MessageTooLong { .. }))) => {
                            self.queue.close(TOO_BIG, "message too big", true);
                            return Ended::TooBig;
                        }
                        Some(Err(_)) => {
                            return match peer_close {
                                Some((code, reason)) => Ended::Peer(code, reason),
                                None => Ended::Broken,
                            }
                        }
                        Some(Ok(message)) => message,
                    };
                    heard = Instant::now();
                    pinged = None;
                    let (data, binary) = match message {
                        Message::Text(text) => (bytes::Bytes::from(text), false),
                        Message::Binary(data) => (data, true),
                        Message::Close(frame) => {
                            let (code, reason) = frame.map_or((NO_STATUS, String::new()), |f| {
                                (u16::from(f.code), f.reason.to_string())
                            });
                            // tungstenite answers it; nothing more goes out.
                            self.queue.peer_closed();
                            peer_close = Some((code, reason));
                            continue;
                        }
                        Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
                    };
                    // Once closing, what still arrives goes unheard.
                    if !self.queue.is_closing() {
                        self.event(WsEvent::Message { data, binary }).await;
                    }
                }
                () = &mut stopping, if !stopped => {
                    stopped = true;
                    self.queue.close(GOING_AWAY, "server shutting down", false);
                }
                () = &mut timer, if !self.queue.is_closing() => {
                    let now = Instant::now();
                    let due = match pinged {
                        Some(at) => at + pong_timeout,
                        None => heard + idle,
                    };
                    if now < due {
                        timer.get_mut().as_mut().reset(due);
                        continue;
                    }
                    if pinged.is_some() {
                        return Ended::NoPong;
                    }
                    self.queue.push_control(Message::Ping(Default::default()));
                    pinged = Some(now);
                    timer.get_mut().as_mut().reset(now + pong_timeout);
                }
            }
        }
    }

    /// Hand `event` to the app, then do what it asks.
    async fn event(&mut self, event: WsEvent) {
        let closed = matches!(event, WsEvent::Close { .. });
        let commands = self.app.event(&self.conn, event).await;
        for command in commands {
            self.apply(command, closed);
        }
    }

    fn apply(&mut self, command: WsCommand, closed: bool) {
        match command {
            WsCommand::Send { data, binary } => {
                if closed {
                    return;
                }
                if self.queue.push(super::frame_of(data, binary)) == Pushed::TooSlow {
                    self.live.count_slow();
                    log::warn(&format!(
                        "ws: closed connection {} of {}: its client read too slowly ({} messages queued)",
                        self.conn.id, self.conn.request.path, self.limits.queue
                    ));
                }
            }
            WsCommand::Close { code, reason } => {
                if let Err(e) = check_close(code, &reason) {
                    log::error(&format!("ws {}: {e}", self.conn.request.path));
                    self.queue.close(1011, "", false);
                } else {
                    self.queue.close(code, &reason, false);
                }
            }
            WsCommand::Subscribe(topic) => {
                if closed || self.subscribed.contains(&topic) {
                    return;
                }
                if let Err(e) = check_topic(&topic) {
                    log::error(&format!("ws {}: {e}", self.conn.request.path));
                    return;
                }
                if self.subscribed.len() >= MAX_TOPICS {
                    log::error(&format!(
                        "ws {}: a connection subscribes to at most {MAX_TOPICS} topics",
                        self.conn.request.path
                    ));
                    return;
                }
                self.live.subscribe_socket(&topic, &self.queue);
                self.subscribed.insert(topic);
            }
            WsCommand::Unsubscribe(topic) => {
                if self.subscribed.remove(&topic) {
                    self.live.unsubscribe_socket(&topic, &self.queue);
                }
            }
            WsCommand::Publish(message) => {
                if let Some(publisher) = &self.publisher {
                    publisher(message);
                }
            }
        }
    }
}

/// Empty `queue` onto the socket: true once the close frame is sent, false
/// if the socket failed first.
async fn write(ws: Shared, queue: Queue) -> bool {
    // tungstenite may hold control frames not yet written.
    let mut control_held = false;
    loop {
        match queue.next().await {
            Next::Out => {
                let sent = poll_fn(|cx| send_queued(&ws, &queue, &mut control_held, cx)).await;
                if sent.is_err() {
                    return false;
                }
            }
            Next::Close(code, reason) => {
                let frame = CloseFrame {
                    code: CloseCode::from(code),
                    reason: Utf8Bytes::from(reason),
                };
                // After every frame queued before it (the socket writes
                // those first); nothing is queued after it: the queue
                // refuses offers once closing.
                return send_close(&ws, frame).await.is_ok();
            }
        }
    }
}

async fn send_close(ws: &Shared, frame: CloseFrame) -> Result<(), WsError> {
    poll_fn(|cx| ws.borrow_mut().poll_ready_unpin(cx)).await?;
    ws.borrow_mut()
        .start_send_unpin(Message::Close(Some(frame)))?;
    poll_fn(|cx| ws.borrow_mut().poll_flush_unpin(cx)).await
}

/// Send what is queued: control frames through tungstenite, the data
/// frames handed to the socket in one batch, and flush them all (one write
/// for a burst, as a broadcast makes). With no control frame held by
/// tungstenite, the socket is first flushed directly, not through
/// tungstenite's flush and its wakers; only a flush that must wait goes
/// through them.
fn send_queued(
    ws: &Shared,
    queue: &Queue,
    control_held: &mut bool,
    cx: &mut Context<'_>,
) -> Poll<Result<(), WsError>> {
    let mut ws = ws.borrow_mut();
    loop {
        while queue.has_control() {
            ready!(ws.poll_ready_unpin(cx))?;
            if let Some(control) = queue.pop_control() {
                ws.start_send_unpin(control)?;
                *control_held = true;
            }
        }
        if let Some(frames) = ws.get_mut().frames_to_fill() {
            queue.take_frames(frames);
        }
        if *control_held {
            ready!(ws.poll_flush_unpin(cx))?;
            *control_held = false;
        } else if let Poll::Ready(done) = Pin::new(ws.get_mut()).poll_flush(cx) {
            done?;
        } else {
            // Wait through tungstenite's flush: tokio keeps one write
            // waker a socket, and a write of the reader's (a pong) would
            // take it; tokio-tungstenite's waker proxy, registered here,
            // wakes both tasks.
            ready!(ws.poll_flush_unpin(cx))?;
        }
        if queue.is_idle() {
            return Poll::Ready(Ok(()));
        }
    }
}

fn far_future() -> Instant {
    Instant::now() + std::time::Duration::from_secs(86_400 * 365)
}
