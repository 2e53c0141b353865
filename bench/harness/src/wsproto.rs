//! The WebSocket wire format as the `ws` table's load client speaks it
//! (RFC 6455): the client's opening handshake and the frames it sends and
//! reads. Hand-written so that the client does little per message (its
//! frames are built once, a read parses headers in place); tungstenite,
//! which the servers' checks use, only derives the handshake's accept key.

use anyhow::{bail, Result};

pub const OP_TEXT: u8 = 0x1;
pub const OP_CLOSE: u8 = 0x8;
pub const OP_PING: u8 = 0x9;
pub const OP_PONG: u8 = 0xA;

/// The key of every handshake: any 16 bytes, base64 (the RFC's example).
pub const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

/// The GET that asks `host` to upgrade `path` to a WebSocket.
pub fn handshake_request(host: &str, path: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
}

/// Where the response head ends in `buf` (the index past its blank line).
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Fail unless `head` (the response head, up to its blank line) is a 101
/// that accepts [`KEY`].
pub fn check_response(head: &str) -> Result<()> {
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or("");
    if status.split_whitespace().nth(1) != Some("101") {
        bail!("the upgrade was answered {status:?}");
    }
    let want = tokio_tungstenite::tungstenite::handshake::derive_accept_key(KEY.as_bytes());
    let accept = lines.find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("sec-websocket-accept")
            .then(|| value.trim())
    });
    match accept {
        Some(a) if a == want => Ok(()),
        Some(a) => bail!("Sec-WebSocket-Accept {a:?}, expected {want:?}"),
        None => bail!("the 101 has no Sec-WebSocket-Accept"),
    }
}

/// A client frame (FIN set, masked with `mask`) carrying `payload`.
pub fn client_frame(opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 14);
    out.push(0x80 | opcode);
    let n = payload.len();
    if n < 126 {
        out.push(0x80 | n as u8);
    } else if n <= 0xFFFF {
        out.push(0x80 | 126);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// One frame read from a server: its opcode, whether it ends a message,
/// and where its payload is in the buffer it was parsed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub fin: bool,
    pub opcode: u8,
    pub payload: (usize, usize),
    /// Bytes of the buffer the frame takes (header and payload).
    pub len: usize,
}

/// Parse the server frame at the start of `buf`: `None` until it is all
/// there. A masked frame or reserved bits (no extension was negotiated)
/// are errors.
pub fn parse_frame(buf: &[u8]) -> Result<Option<Frame>> {
    if buf.len() < 2 {
        return Ok(None);
    }
    let (b0, b1) = (buf[0], buf[1]);
    if b0 & 0x70 != 0 {
        bail!("a frame with reserved bits set ({b0:#04x})");
    }
    if b1 & 0x80 != 0 {
        bail!("a masked frame from the server");
    }
    let (len, at) = match b1 & 0x7F {
        126 => {
            let Some(b) = buf.get(2..4) else {
                return Ok(None);
            };
            (u16::from_be_bytes([b[0], b[1]]) as u64, 4)
        }
        127 => {
            let Some(b) = buf.get(2..10) else {
                return Ok(None);
            };
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            (u64::from_be_bytes(a), 10)
        }
        n => (n as u64, 2),
    };
    if len > (1 << 30) {
        bail!("a frame of {len} bytes");
    }
    let end = at + len as usize;
    if buf.len() < end {
        return Ok(None);
    }
    Ok(Some(Frame {
        fin: b0 & 0x80 != 0,
        opcode: b0 & 0x0F,
        payload: (at, end),
        len: end,
    }))
}

/// The close code of a close frame's payload (1005 when it has none).
pub fn close_code(payload: &[u8]) -> u16 {
    match payload {
        [a, b, ..] => u16::from_be_bytes([*a, *b]),
        _ => 1005,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_tungstenite::tungstenite::protocol::frame::{
        coding::{Data, OpCode},
        Frame as TFrame, FrameHeader,
    };

    /// tungstenite's serialization of a server (unmasked) frame.
    fn server_frame(opcode: OpCode, payload: &[u8], fin: bool) -> Vec<u8> {
        let mut out = Vec::new();
        TFrame::message(payload.to_vec(), opcode, fin)
            .format(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn frames_tungstenite_writes_parse() {
        for n in [0usize, 5, 125, 126, 300, 65_535, 65_536, 70_000] {
            let payload: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            let raw = server_frame(OpCode::Data(Data::Text), &payload, true);
            let f = parse_frame(&raw).unwrap().unwrap();
            assert_eq!((f.fin, f.opcode, f.len), (true, OP_TEXT, raw.len()), "{n}");
            assert_eq!(&raw[f.payload.0..f.payload.1], &payload[..], "{n}");
            // Every shorter prefix is incomplete, not an error.
            for cut in [0, 1, f.payload.0 - 1, raw.len() - 1] {
                if cut < raw.len() {
                    assert_eq!(parse_frame(&raw[..cut]).unwrap(), None, "{n} cut {cut}");
                }
            }
        }
        let b = server_frame(OpCode::Data(Data::Binary), b"\x00\xff", false);
        let f = parse_frame(&b).unwrap().unwrap();
        assert_eq!((f.fin, f.opcode), (false, 0x2));
    }

    #[test]
    fn two_frames_in_one_buffer() {
        let mut raw = server_frame(OpCode::Data(Data::Text), b"one", true);
        let first = raw.len();
        raw.extend(server_frame(OpCode::Data(Data::Text), b"second", true));
        let f = parse_frame(&raw).unwrap().unwrap();
        assert_eq!(f.len, first);
        let g = parse_frame(&raw[f.len..]).unwrap().unwrap();
        assert_eq!(&raw[f.len + g.payload.0..f.len + g.payload.1], b"second");
    }

    #[test]
    fn client_frames_tungstenite_reads() {
        for n in [0usize, 32, 126, 65_536] {
            let payload: Vec<u8> = (0..n).map(|i| (i * 7 % 256) as u8).collect();
            let raw = client_frame(OP_TEXT, &payload, [1, 2, 3, 4]);
            let mut cursor = std::io::Cursor::new(raw.clone());
            let (header, len) = FrameHeader::parse(&mut cursor).unwrap().unwrap();
            assert!(header.is_final);
            assert_eq!(header.opcode, OpCode::Data(Data::Text));
            assert_eq!(header.mask, Some([1, 2, 3, 4]));
            assert_eq!(len as usize, n);
            let at = cursor.position() as usize;
            assert_eq!(raw.len() - at, n);
            let mut body = raw[at..].to_vec();
            body.iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b ^= [1, 2, 3, 4][i % 4]);
            assert_eq!(body, payload, "{n}");
        }
    }

    #[test]
    fn bad_frames() {
        // Masked (from a server), reserved bits, absurd length.
        assert!(parse_frame(&[0x81, 0x85, 1, 2, 3, 4, 0]).is_err());
        assert!(parse_frame(&[0xC1, 0x00]).is_err());
        let mut huge = vec![0x82, 127];
        huge.extend_from_slice(&(1u64 << 40).to_be_bytes());
        assert!(parse_frame(&huge).is_err());
        assert_eq!(close_code(&[0x03, 0xF0, b'x']), 1008);
        assert_eq!(close_code(&[]), 1005);
    }

    #[test]
    fn handshakes() {
        let req = handshake_request("127.0.0.1:9", "/echo");
        assert!(req.starts_with("GET /echo HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"));
        assert!(req.ends_with("\r\n\r\n"));
        // The RFC's example answer to its example key.
        let ok = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                  Connection: Upgrade\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
        assert_eq!(head_end(ok.as_bytes()), Some(ok.len()));
        assert_eq!(head_end(b"HTTP/1.1 101\r\n"), None);
        check_response(ok).unwrap();
        let wrong = ok.replace("s3pP", "xxxx");
        assert!(check_response(&wrong).is_err());
        let e = check_response("HTTP/1.1 404 Not Found\r\n\r\n").unwrap_err();
        assert!(e.to_string().contains("404"), "{e}");
        assert!(check_response("HTTP/1.1 101 OK\r\n\r\n").is_err());
    }
}
