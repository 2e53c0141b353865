//! A data frame as it goes on the wire: its header, formatted once by
//! tungstenite's [`FrameHeader`], and its payload, shared.
//!
//! A server's frames are not masked, so a published message's frame is the
//! same bytes for every subscriber: it is made once per message and worker,
//! and each delivery is a copy of 48 bytes and a reference count. The
//! connection's [`Socket`](super::socket::Socket) writes queued frames
//! itself, many in one `writev` (handed to tungstenite one at a time, each
//! was formatted and copied into its buffer again: ~230 instructions a
//! delivery, measured).

use bytes::Bytes;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::FrameHeader;

/// The longest header of an unmasked frame: two bytes and a 64-bit length.
const HEAD_MAX: usize = 10;

/// One whole data frame (text or binary, final).
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    head: [u8; HEAD_MAX],
    head_len: u8,
    payload: Bytes,
}

impl Frame {
    /// The frame of one message: `payload` as binary, or as text (which
    /// the caller has made valid UTF-8).
    pub(crate) fn new(payload: Bytes, binary: bool) -> Frame {
        let opcode = OpCode::Data(if binary { Data::Binary } else { Data::Text });
        let header = FrameHeader {
            opcode,
            ..FrameHeader::default()
        };
        let mut head = [0u8; HEAD_MAX];
        let mut rest = &mut head[..];
        // Writing to a slice fails only past its end, and an unmasked
        // header is at most HEAD_MAX bytes.
        let _ = header.format(payload.len() as u64, &mut rest);
        let head_len = (HEAD_MAX - rest.len()) as u8;
        Frame {
            head,
            head_len,
            payload,
        }
    }

    /// Its length on the wire.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.head_len) + self.payload.len()
    }

    /// Its bytes from `at` on, as the rest of the header and the payload
    /// (either may be empty).
    pub(crate) fn from(&self, at: usize) -> (&[u8], &[u8]) {
        let head = &self.head[..usize::from(self.head_len)];
        if at < head.len() {
            (&head[at..], &self.payload)
        } else {
            (&[], &self.payload[at - head.len()..])
        }
    }

    #[cfg(test)]
    pub(crate) fn payload(&self) -> &Bytes {
        &self.payload
    }

    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        let (head, payload) = self.from(0);
        [head, payload].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_tungstenite::tungstenite::protocol::frame::Frame as WsFrame;

    /// The bytes tungstenite itself writes for the same message.
    fn tungstenite_bytes(payload: &[u8], binary: bool) -> Vec<u8> {
        let opcode = OpCode::Data(if binary { Data::Binary } else { Data::Text });
        let mut out = Vec::new();
        WsFrame::message(payload.to_vec(), opcode, true)
            .format(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn the_bytes_are_tungstenites_at_every_length_format() {
        for len in [0usize, 1, 125, 126, 65_535, 65_536, 200_000] {
            let payload = Bytes::from(vec![b'x'; len]);
            for binary in [false, true] {
                let frame = Frame::new(payload.clone(), binary);
                let want = tungstenite_bytes(&payload, binary);
                assert_eq!(frame.to_vec(), want, "len {len}");
                assert_eq!(frame.len(), want.len());
            }
        }
    }

    #[test]
    fn from_skips_what_is_written() {
        let frame = Frame::new(Bytes::from_static(b"hello"), false);
        assert_eq!(frame.from(0), (&[0x81, 5][..], &b"hello"[..]));
        assert_eq!(frame.from(1), (&[5][..], &b"hello"[..]));
        assert_eq!(frame.from(2), (&[][..], &b"hello"[..]));
        assert_eq!(frame.from(4), (&[][..], &b"llo"[..]));
        assert_eq!(frame.from(7), (&[][..], &b""[..]));
    }
}
