//! A WebSocket's socket: the connection's own, taken back from hyper after
//! the 101, with what hyper had read past the request (a client may send
//! its first frames without waiting for the 101) read first.
//!
//! Reads: tungstenite zeroes the part of its buffer it reads into before
//! every read, so it is given a small one (`READ_CHUNK`, driver.rs): at
//! 8 KiB the zeroing was ~10% of a small message's user time (perf). A
//! read that fills it means more is waiting (a large message): the next
//! reads take up to `BULK` bytes at a time into a buffer that is not
//! zeroed, which tungstenite then reads from, and which is freed once
//! read.
//!
//! Its write side carries two streams of frames in one order: tungstenite's
//! (control frames: pongs, pings, the close), written through it, and the
//! connection's data [`Frame`]s, which the writer queues here and the socket
//! writes itself: the small ones copied together into one buffer and
//! written with one `write` (as a cork does), a large one from its own
//! bytes. A data frame goes in only between two of tungstenite's writes,
//! never while tungstenite holds the rest of a frame whose start the socket
//! has taken.
//!
//! Why a copy: a broadcast queues many small frames at once, and handing
//! them to the kernel as two `iovec`s each cost more system time a
//! delivery than one contiguous buffer (10–25% in a broadcast to 1,000
//! subscribers, measured on a loaded machine); the copy of a frame of a
//! few dozen bytes costs next to nothing.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::frame::Frame;
use crate::io::Io;

/// Most bytes one read takes once a read filled tungstenite's buffer.
const BULK: usize = 64 * 1024;

/// Frames are copied together up to this many bytes; a larger frame is
/// written from its own bytes.
const STAGE_MAX: usize = 16 * 1024;
/// A staging buffer that grew past this is freed once written (a
/// connection between bursts keeps at most this much).
const STAGE_KEEP: usize = 4 * 1024;

pub(crate) struct Socket {
    /// Read but not yet taken by tungstenite: what hyper read past the
    /// request, then what a bulk read took.
    read: Bytes,
    /// The last read filled tungstenite's buffer (or the bulk buffer): the
    /// next takes up to `BULK` bytes.
    bulk: bool,
    io: Io,
    /// Data frames to write, in order.
    frames: VecDeque<Frame>,
    /// Bytes of the first frame written, when it is written from its own
    /// bytes (a large one).
    frame_written: usize,
    /// Small frames copied together, and how much of them is written.
    staged: Vec<u8>,
    staged_written: usize,
    /// tungstenite's last write was taken in part: it holds the rest, and
    /// nothing may go out before it.
    tail: bool,
}

impl Socket {
    pub(crate) fn new(io: Io, read: Bytes) -> Socket {
        Socket {
            read,
            bulk: false,
            io,
            frames: VecDeque::new(),
            frame_written: 0,
            staged: Vec::new(),
            staged_written: 0,
            tail: false,
        }
    }

    /// Where the writer may put data frames now: the socket's queue, when
    /// all it held is written and no part of tungstenite's frame waits.
    /// (Frames go in only once the last ones are out, so a client that does
    /// not read fills the connection's bounded queue, not this one.)
    pub(crate) fn frames_to_fill(&mut self) -> Option<&mut VecDeque<Frame>> {
        (self.frames.is_empty() && self.staged.is_empty() && !self.tail).then_some(&mut self.frames)
    }

    /// Write the queued frames; ready once all are out.
    fn poll_frames(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            if self.staged.is_empty() {
                let Some(first) = self.frames.front() else {
                    return Poll::Ready(Ok(()));
                };
                if first.len() > STAGE_MAX {
                    let rest = &first.bytes()[self.frame_written..];
                    let n = ready!(Pin::new(&mut self.io).poll_write(cx, rest))?;
                    self.frame_written += wrote(n)?;
                    if self.frame_written == first.len() {
                        self.frames.pop_front();
                        self.frame_written = 0;
                    }
                    continue;
                }
                self.stage();
            }
            let rest = &self.staged[self.staged_written..];
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, rest))?;
            self.staged_written += wrote(n)?;
            if self.staged_written == self.staged.len() {
                self.staged_written = 0;
                if self.staged.capacity() > STAGE_KEEP {
                    self.staged = Vec::new();
                } else {
                    self.staged.clear();
                }
            }
        }
    }

    /// Copy the small frames at the front of the queue together, up to
    /// `STAGE_MAX` bytes (at least one).
    fn stage(&mut self) {
        while let Some(frame) = self.frames.front() {
            let len = frame.len();
            if len > STAGE_MAX || (self.staged.len() + len > STAGE_MAX && !self.staged.is_empty()) {
                break;
            }
            self.staged.extend_from_slice(frame.bytes());
            self.frames.pop_front();
        }
    }
}

/// A write's count, or the error a socket that takes nothing is.
fn wrote(n: usize) -> io::Result<usize> {
    if n == 0 {
        return Err(io::ErrorKind::WriteZero.into());
    }
    Ok(n)
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if me.read.is_empty() {
            if !me.bulk {
                let before = buf.filled().len();
                ready!(Pin::new(&mut me.io).poll_read(cx, buf))?;
                me.bulk = buf.remaining() == 0 && buf.filled().len() > before;
                return Poll::Ready(Ok(()));
            }
            let mut chunk = bytes::BytesMut::with_capacity(BULK);
            let n = ready!(tokio_util::io::poll_read_buf(
                Pin::new(&mut me.io),
                cx,
                &mut chunk
            ))?;
            me.bulk = n == BULK;
            me.read = chunk.freeze();
        }
        let n = me.read.len().min(buf.remaining());
        buf.put_slice(&me.read[..n]);
        me.read.advance(n);
        if me.read.is_empty() {
            // Frees the bulk buffer.
            me.read = Bytes::new();
        }
        Poll::Ready(Ok(()))
    }
}

/// tungstenite's writes: after the queued frames (none are queued while
/// `tail` is set).
impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        ready!(me.poll_frames(cx))?;
        let wrote = ready!(Pin::new(&mut me.io).poll_write(cx, buf))?;
        // tungstenite hands over all it holds each time: taken whole, it
        // holds nothing more.
        me.tail = wrote < buf.len();
        Poll::Ready(Ok(wrote))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        ready!(me.poll_frames(cx))?;
        Pin::new(&mut me.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        ready!(me.poll_frames(cx))?;
        Pin::new(&mut me.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn pair(early: &'static [u8]) -> (Socket, tokio::net::TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (
            Socket::new(Io::Plain(server), Bytes::from_static(early)),
            client,
        )
    }

    fn frame(fill: u8, len: usize) -> Frame {
        Frame::new(Bytes::from(vec![fill; len]), true)
    }

    #[tokio::test]
    async fn what_hyper_read_comes_first_then_the_socket() {
        let (mut socket, mut client) = pair(b"early ").await;
        client.write_all(b"later").await.unwrap();
        client.shutdown().await.unwrap();
        let mut got = Vec::new();
        socket.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"early later");
    }

    /// Read through a small buffer as tungstenite does: a small message in
    /// one read of the socket, a large stream whole and in order (in bulk
    /// once a read fills the buffer), and nothing kept once all is read.
    #[tokio::test]
    async fn reads_through_a_small_buffer_lose_and_keep_nothing() {
        let (mut socket, mut client) = pair(b"early").await;
        let mut small = [0u8; 2048];
        assert_eq!(socket.read(&mut small).await.unwrap(), 5);
        client.write_all(b"hello").await.unwrap();
        assert_eq!(socket.read(&mut small).await.unwrap(), 5);
        assert!(!socket.bulk);

        let sent: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let writer = {
            let sent = sent.clone();
            tokio::spawn(async move {
                client.write_all(&sent).await.unwrap();
                client.shutdown().await.unwrap();
            })
        };
        let mut got = Vec::new();
        let mut bulk_reads = 0;
        loop {
            let n = socket.read(&mut small).await.unwrap();
            if n == 0 {
                break;
            }
            bulk_reads += usize::from(socket.read.len() > small.len());
            got.extend_from_slice(&small[..n]);
        }
        writer.await.unwrap();
        assert!(got == sent, "the bytes differ");
        assert!(bulk_reads > 0, "never read in bulk");
        assert!(socket.read.is_empty());
    }

    /// Frames and tungstenite's writes come out whole and in the order
    /// they went in, across many partial writes to a client that reads
    /// slowly; frames go in only between tungstenite's writes.
    #[tokio::test]
    async fn frames_and_tungstenites_writes_keep_their_order_whole() {
        let (mut socket, mut client) = pair(b"").await;
        // More than the socket buffers take at once: writes come back short.
        let big = vec![b'T'; 8 << 20];
        let mut want = Vec::new();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            client.read_to_end(&mut got).await.unwrap();
            got
        });
        for round in 0..4u8 {
            let frames = socket.frames_to_fill().expect("nothing waits");
            for i in 0..100 {
                let f = frame(
                    round.wrapping_mul(61).wrapping_add(i),
                    // Small ones staged together, large ones (past STAGE_MAX) alone.
                    5_000 + usize::from(i) * 197,
                );
                want.extend_from_slice(f.bytes());
                frames.push_back(f);
            }
            // tungstenite hands over its buffer until all is taken; while
            // part of it waits, no frame may go in.
            let mut rest = &big[..];
            while !rest.is_empty() {
                let n = std::future::poll_fn(|cx| Pin::new(&mut socket).poll_write(cx, rest))
                    .await
                    .unwrap();
                rest = &rest[n..];
                if !rest.is_empty() {
                    assert!(socket.frames_to_fill().is_none());
                }
            }
            want.extend_from_slice(&big);
        }
        socket.flush().await.unwrap();
        socket.shutdown().await.unwrap();
        drop(socket);
        let got = reader.await.unwrap();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the bytes differ");
    }

    #[test]
    fn small_frames_are_staged_together_and_a_large_one_alone() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        rt.block_on(async {
            let (mut socket, _client) = pair(b"").await;
            let frames = socket.frames_to_fill().unwrap();
            frames.push_back(frame(1, 10)); // 12 bytes on the wire
            frames.push_back(frame(2, 200)); // 204
            frames.push_back(frame(3, STAGE_MAX)); // too large to copy
            frames.push_back(frame(4, 10));
            socket.stage();
            assert_eq!(socket.staged.len(), 12 + 204);
            assert_eq!(socket.frames.len(), 2);
            assert!(socket.frames_to_fill().is_none());
            socket.frames.pop_front();
            socket.staged.clear();
            socket.stage();
            assert_eq!(socket.staged.len(), 12);
            assert!(socket.frames.is_empty());
        });
    }
}
