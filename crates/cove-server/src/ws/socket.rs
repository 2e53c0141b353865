//! A WebSocket's socket: the connection's own, taken back from hyper after
//! the 101, with what hyper had read past the request (a client may send
//! its first frames without waiting for the 101) read first.
//!
//! Its write side carries two streams of frames in one order: tungstenite's
//! (control frames: pongs, pings, the close), written through it, and the
//! connection's data [`Frame`]s, which the writer queues here and the socket
//! writes itself, as many as are queued in one `writev`. A data frame goes
//! in only between two of tungstenite's writes, never while tungstenite
//! holds the rest of a frame whose start the socket has taken.

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::frame::Frame;
use crate::io::Io;

/// Slices one `writev` takes at most (two a frame).
const SLICES: usize = 64;

pub(crate) struct Socket {
    /// Read before the socket; empty once read.
    read: Bytes,
    io: Io,
    /// Data frames to write, in order; the first has `written` bytes out.
    frames: VecDeque<Frame>,
    written: usize,
    /// tungstenite's last write was taken in part: it holds the rest, and
    /// nothing may go out before it.
    tail: bool,
}

impl Socket {
    pub(crate) fn new(io: Io, read: Bytes) -> Socket {
        Socket {
            read,
            io,
            frames: VecDeque::new(),
            written: 0,
            tail: false,
        }
    }

    /// Where the writer may put data frames now: the socket's queue, when
    /// it is empty and no part of tungstenite's frame waits. (Frames go in
    /// only once the last ones are out, so a client that does not read
    /// fills the connection's bounded queue, not this one.)
    pub(crate) fn frames_to_fill(&mut self) -> Option<&mut VecDeque<Frame>> {
        (self.frames.is_empty() && !self.tail).then_some(&mut self.frames)
    }

    /// Write the queued frames; ready once all are out.
    fn poll_frames(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.frames.is_empty() {
            let mut slices = [IoSlice::new(&[]); SLICES];
            let mut n = 0;
            let mut at = self.written;
            for frame in &self.frames {
                let (head, payload) = frame.from(at);
                at = 0;
                for part in [head, payload] {
                    if !part.is_empty() {
                        slices[n] = IoSlice::new(part);
                        n += 1;
                    }
                }
                if n + 2 > SLICES {
                    break;
                }
            }
            let wrote = ready!(Pin::new(&mut self.io).poll_write_vectored(cx, &slices[..n]))?;
            if wrote == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.advance(wrote);
        }
        Poll::Ready(Ok(()))
    }

    /// Count `n` more bytes of the queued frames as written.
    fn advance(&mut self, mut n: usize) {
        while let Some(frame) = self.frames.front() {
            let left = frame.len() - self.written;
            if n < left {
                self.written += n;
                return;
            }
            n -= left;
            self.written = 0;
            self.frames.pop_front();
        }
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if me.read.is_empty() {
            return Pin::new(&mut me.io).poll_read(cx, buf);
        }
        let n = me.read.len().min(buf.remaining());
        buf.put_slice(&me.read[..n]);
        me.read.advance(n);
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
                    5_000 + usize::from(i) * 97,
                );
                want.extend(f.to_vec());
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
    fn advance_counts_across_frames() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        rt.block_on(async {
            let (mut socket, _client) = pair(b"").await;
            let frames = socket.frames_to_fill().unwrap();
            frames.push_back(frame(1, 10)); // 12 bytes on the wire
            frames.push_back(frame(2, 200)); // 204
            socket.advance(5);
            assert_eq!((socket.frames.len(), socket.written), (2, 5));
            socket.advance(7);
            assert_eq!((socket.frames.len(), socket.written), (1, 0));
            socket.advance(203);
            assert_eq!((socket.frames.len(), socket.written), (1, 203));
            socket.advance(1);
            assert!(socket.frames.is_empty());
            assert!(socket.frames_to_fill().is_some());
        });
    }
}
