//! A WebSocket's socket: the connection's own, taken back from hyper after
//! the 101, with what hyper had read past the request (a client may send
//! its first frames without waiting for the 101) read first.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::io::Io;

pub(crate) struct Socket {
    /// Read before the socket; empty once read.
    read: Bytes,
    io: Io,
}

impl Socket {
    pub(crate) fn new(io: Io, read: Bytes) -> Socket {
        Socket { read, io }
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

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn what_hyper_read_comes_first_then_the_socket() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let mut socket = Socket::new(Io::Plain(server), Bytes::from_static(b"early "));
        client.write_all(b"later").await.unwrap();
        client.shutdown().await.unwrap();
        let mut got = Vec::new();
        socket.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"early later");
    }
}
