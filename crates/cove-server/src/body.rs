//! The body of every response Cove sends: bytes in memory (what scripts
//! build), or a range of a file on disk read chunk by chunk (large static
//! files), so a 1 GB download never sits in memory and never blocks a worker.

use std::cell::Cell;
use std::fs::File;
use std::future::Future;
use std::io;
use std::os::unix::fs::FileExt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use tokio::task::JoinHandle;

/// Bytes read per chunk of a streamed file: one chunk is in memory per
/// response while the client reads it.
const CHUNK: u64 = 128 * 1024;

/// A response body (see the module docs).
pub struct Body(Inner);

enum Inner {
    /// Taken when sent.
    Bytes(Option<Bytes>),
    File(FileRange),
    /// A Server-Sent Events stream (live/), open until it ends.
    Events(Box<crate::live::EventsBody>),
    /// A 101's (empty): the WebSocket it opens, which the connection's
    /// service takes (conn.rs).
    Upgrade(Cell<Option<Box<crate::ws::Pending>>>),
}

impl Body {
    pub fn bytes(b: Bytes) -> Body {
        Body(Inner::Bytes(Some(b)))
    }

    pub fn empty() -> Body {
        Body(Inner::Bytes(None))
    }

    /// Bytes `start..end` of `file`, read on the blocking pool as the client
    /// takes them.
    pub(crate) fn file(file: Arc<File>, start: u64, end: u64) -> Body {
        Body(Inner::File(FileRange {
            file,
            pos: start,
            end,
            reading: None,
        }))
    }

    pub(crate) fn events(body: crate::live::EventsBody) -> Body {
        Body(Inner::Events(Box::new(body)))
    }

    /// The empty body of a 101 that opens the WebSocket `ws`.
    pub(crate) fn upgrade(ws: Box<crate::ws::Pending>) -> Body {
        Body(Inner::Upgrade(Cell::new(Some(ws))))
    }

    /// The WebSocket a 101 opens (once).
    pub(crate) fn take_upgrade(&self) -> Option<Box<crate::ws::Pending>> {
        match &self.0 {
            Inner::Upgrade(ws) => ws.take(),
            _ => None,
        }
    }

    /// Bytes still to send (0 for an event stream: not known).
    #[inline]
    pub fn len(&self) -> u64 {
        match &self.0 {
            Inner::Bytes(b) => b.as_ref().map_or(0, |b| b.len() as u64),
            Inner::File(f) => f.end - f.pos,
            Inner::Events(_) | Inner::Upgrade(_) => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

struct FileRange {
    file: Arc<File>,
    pos: u64,
    end: u64,
    /// The chunk being read.
    reading: Option<JoinHandle<io::Result<Vec<u8>>>>,
}

impl FileRange {
    // Kept out of line: inlined into hyper's write loop it made every
    // script response ~40 instructions dearer.
    #[cold]
    #[inline(never)]
    fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        let reading = match &mut self.reading {
            Some(r) => r,
            None if self.pos >= self.end => return Poll::Ready(None),
            None => {
                let (file, at) = (self.file.clone(), self.pos);
                let len = (self.end - self.pos).min(CHUNK) as usize;
                // A read from disk can take milliseconds; the worker's other
                // connections go on meanwhile.
                self.reading.insert(tokio::task::spawn_blocking(move || {
                    let mut buf = vec![0; len];
                    file.read_exact_at(&mut buf, at)?;
                    Ok(buf)
                }))
            }
        };
        let read = ready!(Pin::new(reading).poll(cx));
        self.reading = None;
        Poll::Ready(Some(match read {
            Ok(Ok(buf)) => {
                self.pos += buf.len() as u64;
                Ok(Bytes::from(buf))
            }
            Ok(Err(e)) => Err(e),
            Err(e) => Err(io::Error::other(e)),
        }))
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = io::Error;

    #[inline]
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match &mut self.get_mut().0 {
            Inner::Bytes(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Inner::File(f) => f.poll_chunk(cx).map(|c| c.map(|r| r.map(Frame::data))),
            Inner::Events(e) => e.poll_chunk(cx).map(|c| c.map(|b| Ok(Frame::data(b)))),
            Inner::Upgrade(_) => Poll::Ready(None),
        }
    }

    #[inline]
    fn is_end_stream(&self) -> bool {
        match &self.0 {
            Inner::Bytes(b) => b.is_none(),
            Inner::File(f) => f.pos >= f.end && f.reading.is_none(),
            Inner::Events(_) => false,
            Inner::Upgrade(_) => true,
        }
    }

    #[inline]
    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Inner::Events(_) => SizeHint::default(),
            _ => SizeHint::with_exact(self.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    use hyper::body::Body as _;
    use std::io::Write;

    #[test]
    fn streams_a_file_range_in_chunks() {
        let mut tmp = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        tmp.write_all(&data).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let body = Body::file(Arc::new(tmp), 10, 290_000);
        assert_eq!(body.size_hint().exact(), Some(289_990));
        let got = rt.block_on(body.collect()).unwrap().to_bytes();
        assert_eq!(&got[..], &data[10..290_000]);
    }

    #[test]
    fn a_file_that_shrank_is_an_error() {
        let mut tmp = tempfile::tempfile().unwrap();
        tmp.write_all(b"short").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let got = rt.block_on(Body::file(Arc::new(tmp), 0, 100).collect());
        assert!(got.is_err());
    }

    #[test]
    fn bytes_are_sent_once() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let body = Body::bytes(Bytes::from_static(b"hi"));
        assert!(!body.is_end_stream());
        assert_eq!(&rt.block_on(body.collect()).unwrap().to_bytes()[..], b"hi");
        assert!(Body::empty().is_end_stream());
    }
}
