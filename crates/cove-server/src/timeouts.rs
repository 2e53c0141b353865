//! Slow and idle clients: the header timeout and the idle timeout.
//!
//! hyper 1 has one timer, `header_read_timeout`, which runs from the end of
//! one response to the end of the next request head and then closes
//! without a word. Cove wants two: a short one for a request head that
//! trickles in (answered with 408, so the client knows why), and a longer
//! one for a kept-alive connection between requests (closed quietly). So
//! each connection's socket is wrapped in a [`Timed`] stream that keeps
//! both; the connection's service tells it when a request is in the app's
//! hands ([`Phase::Busy`]), when no timer runs: a handler may take as long
//! as it needs.
//!
//! Each connection has one `Sleep`, reset only when it fires (then to the
//! deadline of whatever the connection is doing by then): a request costs
//! two clock reads and no timer update.
//!
//! The stream also glances at each request head it reads ([`HeadScan`])
//! for `Content-Length` together with `Transfer-Encoding`, which hyper
//! hides from the service; the service takes the verdict when it is handed
//! the request ([`Activity::busy`]). Only heads whose first byte is known
//! are scanned: the connection's first, and each one after a request
//! without a body or with a `Content-Length` one, counted byte by byte,
//! once that request has reached the service. A head read in the same
//! read as the one before it (pipelined), or after a chunked body, is not
//! scanned, and neither is anything later on that connection: such a
//! request keeps hyper's framing (the chunks win, then the connection is
//! closed).

use std::cell::Cell;
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use crate::config::HttpLimits;
use crate::head_scan::HeadScan;
use crate::ws::Pending;

/// What a connection is doing, and since when for the timed phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Connected, nothing received yet: the header clock runs from the
    /// accept, so a client that connects and sends nothing is let go too.
    Fresh(Instant),
    /// Part of a request head has arrived: the header clock.
    Head(Instant),
    /// The app has the request (its body may still be arriving): no clock.
    Busy,
    /// The app has answered; hyper has not written any of it yet.
    Answered,
    /// Waiting for the client, since the last write: to read the rest of
    /// the response, or to start its next request. The idle clock.
    Idle(Instant),
}

/// The verdict on the last head scanned, until the service takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scanned {
    /// Taken, or no head scanned since.
    Nothing,
    /// A head without the conflict.
    Clean,
    /// A head with both `Content-Length` and `Transfer-Encoding`.
    Conflict,
}

/// What the stream and the service of one connection share.
struct Shared {
    phase: Cell<Phase>,
    scanned: Cell<Scanned>,
    /// Requests in the app's hands (HTTP/2 runs several at once).
    in_app: Cell<u32>,
    /// A WebSocket the service answered 101 for (HTTP/1.1): the connection
    /// task hands it the socket once hyper lets go of it (conn.rs).
    upgrade: Cell<Option<Box<Pending>>>,
}

/// The connection's phase, shared by its [`Timed`] stream and its service.
#[derive(Clone)]
pub(crate) struct Activity(Rc<Shared>);

impl Activity {
    /// The service has been handed a request: true if its head carried
    /// both `Content-Length` and `Transfer-Encoding`. The verdict is taken,
    /// so the next request does not inherit it (a head that was not
    /// scanned has none: false).
    #[inline]
    pub(crate) fn busy(&self) -> bool {
        self.0.phase.set(Phase::Busy);
        self.0.in_app.set(self.0.in_app.get() + 1);
        self.0.scanned.replace(Scanned::Nothing) == Scanned::Conflict
    }

    /// The service has returned its response (or dropped the request: an
    /// HTTP/2 stream the client reset).
    #[inline]
    pub(crate) fn answered(&self) {
        let left = self.0.in_app.get().saturating_sub(1);
        self.0.in_app.set(left);
        if left == 0 {
            self.0.phase.set(Phase::Answered);
        }
    }

    /// The service answered 101 for `ws`: once hyper has written the 101,
    /// the socket is its.
    #[cold]
    pub(crate) fn upgrade(&self, ws: Box<Pending>) {
        self.0.upgrade.set(Some(ws));
    }

    /// The WebSocket the service answered 101 for, if any.
    pub(crate) fn take_upgrade(&self) -> Option<Box<Pending>> {
        self.0.upgrade.take()
    }
}

/// Where the bytes read next fall in the stream of requests, as far as
/// [`Timed`] can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// In a request head, scanned from its first byte.
    Head,
    /// In the body of the last head scanned: this many bytes of it to come.
    /// At 0, the next byte starts a head.
    Body(u64),
    /// Lost track (pipelined heads, a chunked body, a conflict): nothing
    /// more is scanned on this connection.
    Lost,
}

/// A connection's socket, with its header and idle timeouts. When one runs
/// out, reads end: with 408 sent first if part of a request head had
/// arrived (the read fails), else as a plain end of stream. hyper then
/// closes the connection.
pub(crate) struct Timed<S = TcpStream> {
    stream: S,
    phase: Activity,
    header: Duration,
    idle: Duration,
    /// Fires at or before the deadline of the current phase (see
    /// [`Timed::poll_expiry`]).
    timer: Pin<Box<Sleep>>,
    /// hyper's last write did not go out whole: a response is still on its
    /// way, and a 408 written now would land inside it.
    write_blocked: bool,
    /// A timeout has ended the connection.
    expired: bool,
    framing: Framing,
    scan: HeadScan,
    /// HTTP/2: many requests at once on the connection, and its bytes are
    /// frames, not heads (nothing is scanned, and no 408 is written).
    multiplexed: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Timed<S> {
    /// An HTTP/1.1 connection.
    pub(crate) fn new(stream: S, limits: &HttpLimits) -> Timed<S> {
        let now = Instant::now();
        let (header, idle) = (limits.header_timeout, limits.idle_timeout);
        Timed {
            stream,
            phase: Activity(Rc::new(Shared {
                phase: Cell::new(Phase::Fresh(now)),
                scanned: Cell::new(Scanned::Nothing),
                in_app: Cell::new(0),
                upgrade: Cell::new(None),
            })),
            header,
            idle,
            timer: Box::pin(tokio::time::sleep_until(now + header.min(idle))),
            write_blocked: false,
            expired: false,
            framing: Framing::Head,
            scan: HeadScan::default(),
            multiplexed: false,
        }
    }

    /// An HTTP/2 connection: the header clock runs until its first request
    /// (or, after the idle clock was started, the next one) reaches the
    /// app, then ends the connection without a 408; the idle clock runs
    /// while no request is in the app's hands.
    pub(crate) fn multiplexed(stream: S, limits: &HttpLimits) -> Timed<S> {
        let mut timed = Timed::new(stream, limits);
        timed.multiplexed = true;
        timed.framing = Framing::Lost;
        timed
    }

    pub(crate) fn activity(&self) -> Activity {
        self.phase.clone()
    }

    /// The socket, and what its service shared with it; the clocks stop.
    pub(crate) fn into_parts(self) -> (S, Activity) {
        (self.stream, self.phase)
    }

    /// Bytes arrived.
    #[inline]
    fn received(&self) {
        let phase = &self.phase.0.phase;
        match phase.get() {
            Phase::Fresh(since) => phase.set(Phase::Head(since)),
            Phase::Idle(_) => phase.set(Phase::Head(Instant::now())),
            _ => {}
        }
    }

    /// Follow the request framing through the bytes just read, scanning
    /// the heads among them.
    fn track(&mut self, mut bytes: &[u8]) {
        loop {
            match self.framing {
                Framing::Lost => return,
                Framing::Body(left) => match usize::try_from(left) {
                    Ok(left) if left < bytes.len() => {
                        bytes = &bytes[left..];
                        self.framing = Framing::Head;
                    }
                    _ => {
                        self.framing = Framing::Body(left - bytes.len() as u64);
                        return;
                    }
                },
                Framing::Head => {
                    // The verdict on the head before must have been taken
                    // (hyper hands requests over in order, each as soon as
                    // its head is read): if not, this head came in the same
                    // read as that one, and a verdict now would go to it.
                    let scanned = &self.phase.0.scanned;
                    if scanned.get() != Scanned::Nothing {
                        self.framing = Framing::Lost;
                        return;
                    }
                    let Some(head) = self.scan.feed(bytes) else {
                        return;
                    };
                    scanned.set(if head.conflict {
                        Scanned::Conflict
                    } else {
                        Scanned::Clean
                    });
                    self.framing = match head.body {
                        // Refused, and the connection closed.
                        _ if head.conflict => Framing::Lost,
                        Some(len) => Framing::Body(len),
                        None => Framing::Lost,
                    };
                    bytes = &bytes[head.end..];
                    if bytes.is_empty() {
                        return;
                    }
                }
            }
        }
    }

    /// A write of `len` bytes came back with `res`; what to tell hyper.
    #[inline]
    fn wrote(
        &mut self,
        cx: &mut Context<'_>,
        res: Poll<io::Result<usize>>,
        len: usize,
    ) -> Poll<io::Result<usize>> {
        match &res {
            Poll::Ready(Ok(n)) => {
                self.write_blocked = *n < len;
                // Each write that makes progress restarts the idle clock:
                // a long download is fine, a client that stops reading is
                // let go like one that stops sending.
                let phase = &self.phase.0.phase;
                if *n > 0 && matches!(phase.get(), Phase::Answered | Phase::Idle(_)) {
                    phase.set(Phase::Idle(Instant::now()));
                }
            }
            Poll::Pending => {
                self.write_blocked = true;
                // hyper may not be reading meanwhile (it has the next
                // pipelined request already): the clock is watched here too.
                if self.expired || self.poll_expiry(cx).is_ready() {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client stopped reading the response",
                    )));
                }
            }
            Poll::Ready(Err(_)) => {}
        }
        res
    }

    /// Called when a read or a write has to wait: `Pending` until the
    /// current phase's deadline passes.
    fn poll_expiry(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.timer.as_mut().poll(cx).is_ready() {
            let now = Instant::now();
            let shortest = self.header.min(self.idle);
            let due = match self.phase.0.phase.get() {
                Phase::Fresh(since) | Phase::Head(since) => since + self.header,
                Phase::Idle(since) => since + self.idle,
                Phase::Busy | Phase::Answered => now + shortest,
            };
            if due > now {
                // Any phase entered later starts now or later, so its
                // deadline is at least `now + shortest`: the timer never
                // fires after the deadline, whatever happens until then.
                self.timer.as_mut().reset(due.min(now + shortest));
                continue;
            }
            self.expired = true;
            if !self.multiplexed && matches!(self.phase.0.phase.get(), Phase::Head(_)) {
                self.send_408();
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the request head did not arrive within the header timeout",
                )));
            }
            // Nothing of a request yet: just an end of stream.
            return Poll::Ready(Ok(()));
        }
        Poll::Pending
    }

    fn send_408(&mut self) {
        if self.write_blocked {
            return;
        }
        let res = format!(
            "HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\
             date: {}\r\n\r\n",
            httpdate::fmt_http_date(SystemTime::now())
        );
        // Best effort, without waiting: a client that is sending a request
        // has room to receive these few bytes; if not, it is closed anyway.
        // (Polled with a waker that does nothing: no one waits for it.)
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut stream = Pin::new(&mut self.stream);
        if let Poll::Ready(Ok(_)) = stream.as_mut().poll_write(&mut cx, res.as_bytes()) {
            // TLS holds the record until flushed.
            let _ = stream.poll_flush(&mut cx);
        }
    }
}

// Inlined into hyper's reads and writes even though HTTP/1.1 and HTTP/2
// both call them (io.rs: a function with two callers stays out of line).
impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Timed<S> {
    #[inline(always)]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if me.expired {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut me.stream).poll_read(cx, buf) {
            Poll::Pending => me.poll_expiry(cx),
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                me.received();
                if me.framing != Framing::Lost {
                    me.track(&buf.filled()[before..]);
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Timed<S> {
    #[inline(always)]
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let res = Pin::new(&mut me.stream).poll_write(cx, buf);
        me.wrote(cx, res, buf.len())
    }

    #[inline(always)]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let res = Pin::new(&mut me.stream).poll_write_vectored(cx, bufs);
        me.wrote(cx, res, bufs.iter().map(|b| b.len()).sum())
    }

    #[inline(always)]
    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    #[inline(always)]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    #[inline(always)]
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    //! On tokio's paused clock: time moves only when every task waits, and
    //! then straight to the next timer, so the deadlines are exact.

    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    const HEADER: Duration = Duration::from_secs(10);
    const IDLE: Duration = Duration::from_secs(30);

    /// A client socket and the server's end of it, wrapped.
    async fn pair() -> (TcpStream, Timed) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let limits = HttpLimits {
            header_timeout: HEADER,
            idle_timeout: IDLE,
            ..HttpLimits::default()
        };
        (client, Timed::new(server, &limits))
    }

    /// Everything the server sent until it ended the connection.
    async fn received(mut client: TcpStream) -> String {
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.unwrap();
        String::from_utf8(got).unwrap()
    }

    /// Read what the client sent (it must have sent something).
    async fn take(server: &mut Timed) -> Vec<u8> {
        let mut buf = [0u8; 1024];
        let n = server.read(&mut buf).await.unwrap();
        assert!(n > 0, "expected bytes, got the end of the stream");
        buf[..n].to_vec()
    }

    /// hyper's part in an exchange: the service is handed the request,
    /// answers, and the answer is written.
    async fn answer(server: &mut Timed) {
        let activity = server.activity();
        activity.busy();
        activity.answered();
        server
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .await
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_that_sends_nothing_is_let_go_without_an_answer() {
        let (client, mut server) = pair().await;
        let start = Instant::now();
        let mut buf = [0u8; 16];
        assert_eq!(server.read(&mut buf).await.unwrap(), 0, "end of stream");
        assert_eq!(start.elapsed(), HEADER);
        drop(server);
        assert_eq!(received(client).await, "");
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_that_stops_halfway_gets_408() {
        let (mut client, mut server) = pair().await;
        let start = Instant::now();
        client.write_all(b"GET / HTTP/1.1\r\nHo").await.unwrap();
        take(&mut server).await;
        let err = server.read(&mut [0u8; 16]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        // The clock of a first request runs from the accept.
        assert_eq!(start.elapsed(), HEADER);
        drop(server);
        let got = received(client).await;
        assert!(
            got.starts_with("HTTP/1.1 408 Request Timeout\r\nconnection: close\r\n"),
            "{got:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_that_trickles_in_is_cut_off_at_the_header_timeout() {
        let (mut client, mut server) = pair().await;
        let start = Instant::now();
        // A byte every 3 s: each read gets something, the head never ends.
        tokio::spawn(async move {
            for byte in b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n\r\n" {
                if client.write_all(&[*byte]).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_secs(3)).await;
            }
        });
        let mut got = 0;
        let cut = loop {
            match server.read(&mut [0u8; 16]).await {
                Ok(n) => got += n,
                Err(e) => break e,
            }
        };
        assert_eq!(cut.kind(), io::ErrorKind::TimedOut);
        assert_eq!(start.elapsed(), HEADER);
        assert_eq!(got, 4, "the bytes sent at 0, 3, 6 and 9 s");
    }

    #[tokio::test(start_paused = true)]
    async fn http2_waits_for_every_request_in_the_app_and_never_writes_408() {
        let (mut client, server) = pair().await;
        let limits = HttpLimits {
            header_timeout: HEADER,
            idle_timeout: IDLE,
            ..HttpLimits::default()
        };
        // Rewrap the server's socket as an HTTP/2 connection.
        let mut server = Timed::multiplexed(server.stream, &limits);
        client
            .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .unwrap();
        take(&mut server).await;
        let activity = server.activity();
        // Two streams in the app; one answered: no clock runs for the other.
        activity.busy();
        activity.busy();
        activity.answered();
        server.write_all(b"frames").await.unwrap();
        let slow = tokio::time::timeout(IDLE * 3, server.read(&mut [0u8; 16])).await;
        assert!(slow.is_err(), "the connection waited for the second stream");
        // The second answered: the idle clock closes it, quietly.
        activity.answered();
        server.write_all(b"frames").await.unwrap();
        let answered = Instant::now();
        assert_eq!(server.read(&mut [0u8; 16]).await.unwrap(), 0);
        assert_eq!(answered.elapsed(), IDLE);
        // A preface and nothing more: closed at the header timeout, no 408.
        let (mut client, server) = pair().await;
        let mut server = Timed::multiplexed(server.stream, &limits);
        client.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
        take(&mut server).await;
        let start = Instant::now();
        assert_eq!(server.read(&mut [0u8; 16]).await.unwrap(), 0);
        assert_eq!(start.elapsed(), HEADER);
        drop(server);
        assert_eq!(received(client).await, "");
    }

    #[tokio::test(start_paused = true)]
    async fn a_kept_alive_connection_is_closed_after_the_idle_timeout() {
        let (mut client, mut server) = pair().await;
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        take(&mut server).await;
        answer(&mut server).await;
        let answered = Instant::now();
        assert_eq!(server.read(&mut [0u8; 16]).await.unwrap(), 0);
        assert_eq!(answered.elapsed(), IDLE);
        drop(server);
        // The response, and no 408 after it.
        let got = received(client).await;
        assert_eq!(got, "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
    }

    #[tokio::test(start_paused = true)]
    async fn each_write_of_a_response_restarts_the_idle_clock() {
        let (mut client, mut server) = pair().await;
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        take(&mut server).await;
        answer(&mut server).await;
        // More of a long response goes out just before the idle timeout.
        tokio::time::sleep(IDLE - Duration::from_secs(1)).await;
        server.write_all(b"more").await.unwrap();
        let wrote = Instant::now();
        assert_eq!(server.read(&mut [0u8; 16]).await.unwrap(), 0);
        assert_eq!(wrote.elapsed(), IDLE);
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_that_stops_reading_a_response_is_let_go() {
        let (mut client, mut server) = pair().await;
        client
            .write_all(b"GET /big HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        take(&mut server).await;
        answer(&mut server).await;
        // Far more than the socket buffers hold; the client reads none of it.
        let big = vec![b'x'; 64 << 20];
        let hour = Duration::from_secs(3600);
        let err = tokio::time::timeout(hour, server.write_all(&big))
            .await
            .expect("cut off well within the hour")
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(client);
    }

    #[tokio::test(start_paused = true)]
    async fn a_later_request_gets_the_header_timeout_from_its_first_byte() {
        let (mut client, mut server) = pair().await;
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        take(&mut server).await;
        answer(&mut server).await;
        tokio::time::sleep(IDLE - Duration::from_secs(1)).await;
        client.write_all(b"GET /next HT").await.unwrap();
        take(&mut server).await;
        let first_byte = Instant::now();
        let err = server.read(&mut [0u8; 16]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(first_byte.elapsed(), HEADER);
        drop(server);
        let got = received(client).await;
        assert!(
            got.ends_with("\r\n\r\n") && got.contains("HTTP/1.1 408 "),
            "{got:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_the_apps_hands_is_never_timed_out() {
        let (mut client, mut server) = pair().await;
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        take(&mut server).await;
        server.activity().busy();
        let hour = Duration::from_secs(3600);
        let read = tokio::time::timeout(hour, server.read(&mut [0u8; 16])).await;
        assert!(read.is_err(), "the read ended while busy: {read:?}");
        // Its answer starts the idle clock.
        server.activity().answered();
        server
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .await
            .unwrap();
        assert_eq!(server.read(&mut [0u8; 16]).await.unwrap(), 0);
    }

    const CONFLICT: &[u8] =
        b"POST /c HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n";

    /// The client sends each of `reads` (the server reads each whole before
    /// the next is sent); after each, the service is handed `handed[i]`
    /// requests. What `busy` said for each of them.
    async fn verdicts(reads: &[&[u8]], handed: &[usize]) -> Vec<bool> {
        let (mut client, mut server) = pair().await;
        let activity = server.activity();
        let mut said = Vec::new();
        for (bytes, n) in reads.iter().zip(handed) {
            client.write_all(bytes).await.unwrap();
            let mut got = 0;
            while got < bytes.len() {
                got += take(&mut server).await.len();
            }
            for _ in 0..*n {
                said.push(activity.busy());
                activity.answered();
            }
        }
        said
    }

    #[tokio::test]
    async fn a_head_with_both_lengths_is_told_to_the_service_once() {
        assert_eq!(verdicts(&[CONFLICT], &[1]).await, [true]);
        // Across reads, split in a name.
        let (a, b) = CONFLICT.split_at(40);
        assert_eq!(verdicts(&[a, b], &[0, 1]).await, [true]);
        // Taken: a later request that was not scanned does not inherit it.
        assert_eq!(verdicts(&[CONFLICT], &[2]).await, [true, false]);
        assert_eq!(verdicts(&[b"GET / HTTP/1.1\r\n\r\n"], &[1]).await, [false]);
    }

    #[tokio::test]
    async fn heads_after_a_bodiless_or_counted_body_are_scanned() {
        let get = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        let post = b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab";
        assert_eq!(verdicts(&[get, CONFLICT], &[1, 1]).await, [false, true]);
        // The body split across reads, the next head right after it.
        let mut rest = b"cde".to_vec();
        rest.extend_from_slice(CONFLICT);
        assert_eq!(verdicts(&[post, &rest], &[1, 1]).await, [false, true]);
        // A body that looks like a head is not scanned as one.
        let mut body = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            CONFLICT.len()
        )
        .into_bytes();
        body.extend_from_slice(CONFLICT);
        assert_eq!(verdicts(&[&body, get], &[1, 1]).await, [false, false]);
    }

    #[tokio::test]
    async fn pipelined_heads_or_a_chunked_body_stop_the_scan() {
        let get = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        // In the same read as the head before it: not scanned, nor later.
        let mut two = get.to_vec();
        two.extend_from_slice(CONFLICT);
        assert_eq!(
            verdicts(&[&two, CONFLICT], &[2, 1]).await,
            [false, false, false]
        );
        // After a chunked body, where the next head starts is unknown.
        let chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
        assert_eq!(
            verdicts(&[chunked, CONFLICT], &[1, 1]).await,
            [false, false]
        );
    }
}
