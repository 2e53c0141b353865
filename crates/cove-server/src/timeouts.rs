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

/// The connection's phase, shared by its [`Timed`] stream and its service.
#[derive(Clone)]
pub(crate) struct Activity(Rc<Cell<Phase>>);

impl Activity {
    /// The service has been handed a request.
    #[inline]
    pub(crate) fn busy(&self) {
        self.0.set(Phase::Busy);
    }

    /// The service has returned its response.
    #[inline]
    pub(crate) fn answered(&self) {
        self.0.set(Phase::Answered);
    }
}

/// A connection's socket, with its header and idle timeouts. When one runs
/// out, reads end: with 408 sent first if part of a request head had
/// arrived (the read fails), else as a plain end of stream. hyper then
/// closes the connection.
pub(crate) struct Timed {
    stream: TcpStream,
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
}

impl Timed {
    pub(crate) fn new(stream: TcpStream, limits: &HttpLimits) -> Timed {
        let now = Instant::now();
        let (header, idle) = (limits.header_timeout, limits.idle_timeout);
        Timed {
            stream,
            phase: Activity(Rc::new(Cell::new(Phase::Fresh(now)))),
            header,
            idle,
            timer: Box::pin(tokio::time::sleep_until(now + header.min(idle))),
            write_blocked: false,
            expired: false,
        }
    }

    pub(crate) fn activity(&self) -> Activity {
        self.phase.clone()
    }

    /// Bytes arrived.
    #[inline]
    fn received(&self) {
        match self.phase.0.get() {
            Phase::Fresh(since) => self.phase.0.set(Phase::Head(since)),
            Phase::Idle(_) => self.phase.0.set(Phase::Head(Instant::now())),
            _ => {}
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
                if *n > 0 && matches!(self.phase.0.get(), Phase::Answered | Phase::Idle(_)) {
                    self.phase.0.set(Phase::Idle(Instant::now()));
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
            let due = match self.phase.0.get() {
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
            if matches!(self.phase.0.get(), Phase::Head(_)) {
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

    fn send_408(&self) {
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
        let _ = self.stream.try_write(res.as_bytes());
    }
}

impl AsyncRead for Timed {
    #[inline]
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
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl AsyncWrite for Timed {
    #[inline]
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let res = Pin::new(&mut me.stream).poll_write(cx, buf);
        me.wrote(cx, res, buf.len())
    }

    #[inline]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let res = Pin::new(&mut me.stream).poll_write_vectored(cx, bufs);
        me.wrote(cx, res, bufs.iter().map(|b| b.len()).sum())
    }

    #[inline]
    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    #[inline]
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
        answer(&mut server).await;
        assert_eq!(server.read(&mut [0u8; 16]).await.unwrap(), 0);
    }
}
