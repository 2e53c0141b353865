//! A small blocking HTTP/1.1 client: raw bytes, keep-alive, pipelining.

use std::io::{self, Read, Write};
use std::net::TcpStream;

use super::TIMEOUT;

/// A parsed HTTP response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// First value of a header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.text()))
    }
}

/// Serialize a request; adds `Host` and, with a body, `Content-Length`.
pub fn build_request(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Vec<u8> {
    let mut out = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\n");
    for (n, v) in headers {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    if let Some(b) = body {
        out.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default());
    bytes
}

/// A blocking HTTP/1.1 client connection (keep-alive, pipelining, raw bytes).
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

impl Conn {
    pub fn open(port: u16) -> Conn {
        Conn::try_open(port).expect("connect to cove")
    }

    pub fn try_open(port: u16) -> io::Result<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(TIMEOUT))?;
        stream.set_write_timeout(Some(TIMEOUT))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::new(),
        })
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write request");
    }

    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Response {
        self.try_request(method, path, headers, body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    pub fn try_request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> io::Result<Response> {
        let written = self
            .stream
            .write_all(&build_request(method, path, headers, body));
        match written {
            Ok(()) => self.try_read_response(method == "HEAD"),
            // A server may answer before it has read the whole request (413
            // for a body over the limit) and close: the answer is still
            // there to read, as it is for any client that reads on error.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                ) =>
            {
                self.try_read_response(method == "HEAD").map_err(|_| e)
            }
            Err(e) => Err(e),
        }
    }

    /// Read the next response (to a request that was not HEAD).
    pub fn read_response(&mut self) -> Response {
        self.try_read_response(false).expect("read response")
    }

    /// Read more bytes; `Ok(false)` on EOF.
    fn fill(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk)?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    fn take(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill()? {
                return Err(bad("connection closed inside the body"));
            }
        }
        Ok(self.buf.drain(..n).collect())
    }

    fn take_line(&mut self) -> io::Result<String> {
        loop {
            if let Some(i) = find(&self.buf, b"\r\n") {
                let line: Vec<u8> = self.buf.drain(..i + 2).collect();
                return Ok(String::from_utf8_lossy(&line[..i]).into_owned());
            }
            if !self.fill()? {
                return Err(bad("connection closed inside a chunked body"));
            }
        }
    }

    pub fn try_read_response(&mut self, head: bool) -> io::Result<Response> {
        let end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i;
            }
            if !self.fill()? {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("connection closed before a response head: {:?}", self.buf),
                ));
            }
        };
        let head_bytes: Vec<u8> = self.buf.drain(..end + 4).collect();
        let text = String::from_utf8_lossy(&head_bytes[..end]).into_owned();
        let mut lines = text.split("\r\n");
        let status_line = lines.next().unwrap_or_default();
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default();
        if version != "HTTP/1.1" {
            return Err(bad(format!("bad status line {status_line:?}")));
        }
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad(format!("bad status line {status_line:?}")))?;
        let reason = parts.next().unwrap_or_default().to_string();
        let mut headers = Vec::new();
        for line in lines {
            let (n, v) = line
                .split_once(':')
                .ok_or_else(|| bad(format!("bad header line {line:?}")))?;
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let mut res = Response {
            status,
            reason,
            headers,
            body: Vec::new(),
        };
        if head || status < 200 || status == 204 || status == 304 {
            return Ok(res);
        }
        if res
            .header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let size_line = self.take_line()?;
                let size = usize::from_str_radix(size_line.split(';').next().unwrap().trim(), 16)
                    .map_err(|_| bad(format!("bad chunk size {size_line:?}")))?;
                if size == 0 {
                    while !self.take_line()?.is_empty() {}
                    break;
                }
                let data = self.take(size + 2)?;
                res.body.extend_from_slice(&data[..size]);
            }
        } else if let Some(len) = res.header("content-length") {
            let len: usize = len.parse().map_err(|_| bad("bad content-length"))?;
            res.body = self.take(len)?;
        } else {
            while self.fill()? {}
            res.body = std::mem::take(&mut self.buf);
        }
        Ok(res)
    }

    /// Whether any of a response has arrived yet (without waiting for one).
    pub fn has_data(&mut self) -> bool {
        if !self.buf.is_empty() {
            return true;
        }
        self.stream.set_nonblocking(true).expect("nonblocking");
        let mut byte = [0u8; 1];
        let peeked = self.stream.peek(&mut byte);
        self.stream.set_nonblocking(false).expect("blocking");
        matches!(peeked, Ok(n) if n > 0)
    }

    /// True if the server closed the connection (EOF with nothing pending).
    pub fn closed_by_server(&mut self) -> bool {
        self.buf.is_empty() && matches!(self.fill(), Ok(false) | Err(_))
    }
}
