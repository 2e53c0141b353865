//! A data frame as it goes on the wire, whole: its header, formatted by
//! tungstenite's [`FrameHeader`], and its payload, in one buffer shared by
//! reference count.
//!
//! A server's frames are not masked, so a published message's frame is the
//! same bytes for every subscriber: it is made once per message and worker,
//! and each delivery queues a pointer to it (a non-atomic count: frames
//! never leave their worker's thread). The connection's
//! [`Socket`](super::socket::Socket) writes queued frames itself, many in
//! one write (handed to tungstenite one at a time, each was formatted and
//! copied into its buffer again: ~230 instructions a delivery, measured).

use std::rc::Rc;

use bytes::Bytes;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::FrameHeader;

/// The longest header of an unmasked frame: two bytes and a 64-bit length.
const HEAD_MAX: usize = 10;

/// One whole data frame (text or binary, final).
#[derive(Clone, Debug)]
pub(crate) struct Frame(Rc<Vec<u8>>);

impl Frame {
    /// The frame of one message: `payload` as binary, or as text (which
    /// the caller has made valid UTF-8).
    pub(crate) fn new(payload: Bytes, binary: bool) -> Frame {
        let opcode = OpCode::Data(if binary { Data::Binary } else { Data::Text });
        let header = FrameHeader {
            opcode,
            ..FrameHeader::default()
        };
        let mut bytes = Vec::with_capacity(HEAD_MAX + payload.len());
        // Writing to a Vec does not fail.
        let _ = header.format(payload.len() as u64, &mut bytes);
        bytes.extend_from_slice(&payload);
        Frame(Rc::new(bytes))
    }

    /// Its length on the wire.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Its bytes on the wire.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }

    #[cfg(test)]
    pub(crate) fn payload(&self) -> &[u8] {
        let head = usize::from(self.0[1] & 0x7f);
        let head = match head {
            126 => 4,
            127 => 10,
            _ => 2,
        };
        &self.0[head..]
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
                assert_eq!(frame.bytes(), want, "len {len}");
                assert_eq!(frame.payload(), &payload[..]);
                assert_eq!(frame.len(), want.len());
            }
        }
    }
}
