//! Local servers that apps under test talk to: an HTTP echo (plain or TLS),
//! an HTTP receiver that records what it got, and an SMTP sink (plain or
//! with STARTTLS) that records what it got.
//! TLS uses a fresh self-signed certificate that the server under test
//! trusts only through `SSL_CERT_FILE`, the standard way to add roots.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// The response limit of the http client (cove-caps).
pub const MAX_RESPONSE: usize = 4 * 1024 * 1024;

/// A certificate for `localhost` and `127.0.0.1`.
pub struct Tls {
    pub config: Arc<ServerConfig>,
    /// PEM of the certificate, for `SSL_CERT_FILE`.
    pub ca_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tls {
    pub fn new() -> Tls {
        let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        let ck = rcgen::generate_simple_self_signed(names).expect("certificate");
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(vec![ck.cert.der().clone()], key)
            .expect("server config");
        let dir = tempfile::tempdir().expect("tempdir");
        let ca_file = dir.path().join("ca.pem");
        std::fs::write(&ca_file, ck.cert.pem()).expect("write ca.pem");
        Tls {
            config: Arc::new(config),
            ca_file,
            _dir: dir,
        }
    }

    pub fn env(&self) -> (&'static str, &str) {
        ("SSL_CERT_FILE", self.ca_file.to_str().expect("utf-8 path"))
    }
}

/// Accept connections on a fresh port forever (the thread dies with the
/// test process), each served on its own thread.
fn listen(serve: impl Fn(TcpStream) + Send + Sync + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let serve = Arc::new(serve);
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(s) = conn else { break };
            let _ = s.set_read_timeout(Some(Duration::from_secs(60)));
            let serve = serve.clone();
            thread::spawn(move || serve(s));
        }
    });
    port
}

/// A port nothing listens on.
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// The HTTP echo: `/slow` answers after 1.5 s, `/big` sends one byte more
/// than the client accepts; anything else is echoed back as JSON
/// `{method, target, headers, body}` with `X-Echo: yes` and a duplicated
/// `X-Dup` (1, then 2).
pub fn echo(tls: Option<Arc<ServerConfig>>) -> u16 {
    listen(move |s| {
        let stream: Box<dyn Stream> = match &tls {
            Some(cfg) => match ServerConnection::new(cfg.clone()) {
                Ok(conn) => Box::new(StreamOwned::new(conn, s)),
                Err(_) => return,
            },
            None => Box::new(s),
        };
        let _ = answer(stream);
    })
}

fn read_request(s: &mut dyn Stream) -> io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return Ok((head, buf[end + 4..end + 4 + len].to_vec()));
            }
        }
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn answer(mut s: Box<dyn Stream>) -> io::Result<()> {
    let (head, body) = read_request(&mut *s)?;
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_string();
    let target = first.next().unwrap_or_default().to_string();
    let headers: serde_json::Map<String, serde_json::Value> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.trim().into()))
        .collect();
    match target.as_str() {
        "/slow" => {
            thread::sleep(Duration::from_millis(1500));
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nslow done")?;
        }
        "/big" => {
            let len = MAX_RESPONSE + 1;
            write!(s, "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n")?;
            let block = vec![b'x'; 64 * 1024];
            let mut left = len;
            while left > 0 {
                let n = left.min(block.len());
                s.write_all(&block[..n])?;
                left -= n;
            }
        }
        _ => {
            let echoed = serde_json::json!({
                "method": method, "target": target, "headers": headers,
                "body": String::from_utf8_lossy(&body),
            })
            .to_string();
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Echo: yes\r\nX-Dup: 1\r\nX-Dup: 2\r\nContent-Length: {}\r\n\r\n{echoed}",
                echoed.len()
            )?;
        }
    }
    s.flush()
}

/// One request as a [`Receiver`] got it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub target: String,
    /// Names lower-cased, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// An HTTP server that records every request, then answers it with the
/// next of its statuses (the last one repeats) and the body `ok`.
pub struct Receiver {
    pub port: u16,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub fn start(statuses: &[u16]) -> Receiver {
        assert!(!statuses.is_empty(), "a receiver needs a status to answer");
        let got: Arc<Mutex<Vec<Received>>> = Arc::default();
        let record = got.clone();
        let statuses = statuses.to_vec();
        let port = listen(move |mut s| {
            let Ok((head, body)) = read_request(&mut s) else {
                return;
            };
            let mut lines = head.split("\r\n");
            let mut first = lines.next().unwrap_or_default().split(' ');
            let req = Received {
                method: first.next().unwrap_or_default().to_string(),
                target: first.next().unwrap_or_default().to_string(),
                headers: lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(n, v)| (n.to_ascii_lowercase(), v.trim().to_string()))
                    .collect(),
                body: String::from_utf8_lossy(&body).into_owned(),
            };
            // Recorded before the answer: once the app has its response,
            // the request is in the list.
            let status = {
                let mut got = record.lock().unwrap();
                got.push(req);
                statuses[(got.len() - 1).min(statuses.len() - 1)]
            };
            let _ = write!(
                s,
                "HTTP/1.1 {status} Status\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
            );
        });
        Receiver { port, got }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The requests so far.
    pub fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }
}

/// One SMTP conversation as the sink saw it.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// Command lines, without CRLF (after STARTTLS too).
    pub commands: Vec<String>,
    /// Each message as received between DATA and the final `.` (still
    /// dot-stuffed), lines joined with CRLF.
    pub messages: Vec<String>,
    /// The conversation switched to TLS.
    pub tls: bool,
}

/// An SMTP sink; offers STARTTLS when given a TLS config.
pub struct Sink {
    pub port: u16,
    sessions: Arc<Mutex<Vec<Session>>>,
}

impl Sink {
    pub fn start(tls: Option<Arc<ServerConfig>>) -> Sink {
        let sessions: Arc<Mutex<Vec<Session>>> = Arc::default();
        let record = sessions.clone();
        let port = listen(move |s| {
            let mut session = Session::default();
            let _ = converse(s, tls.as_ref(), &mut session);
            record.lock().unwrap().push(session);
        });
        Sink { port, sessions }
    }

    /// Conversations finished so far.
    pub fn sessions(&self) -> Vec<Session> {
        self.sessions.lock().unwrap().clone()
    }

    /// Wait for `n` finished conversations (the sink records one when the
    /// client hangs up, which may trail the app's response).
    pub fn wait_sessions(&self, n: usize) -> Vec<Session> {
        let start = std::time::Instant::now();
        loop {
            let sessions = self.sessions();
            if sessions.len() >= n || start.elapsed() > crate::util::TIMEOUT {
                return sessions;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

enum Next {
    Quit,
    StartTls,
}

fn converse(
    s: TcpStream,
    tls: Option<&Arc<ServerConfig>>,
    session: &mut Session,
) -> io::Result<()> {
    let raw = s.try_clone()?;
    let mut plain: Box<dyn Stream> = Box::new(s);
    plain.write_all(b"220 sink ESMTP\r\n")?;
    if let Next::StartTls = commands(plain, tls.is_some(), session)? {
        let Some(cfg) = tls else { return Ok(()) };
        let conn = ServerConnection::new(cfg.clone()).map_err(io::Error::other)?;
        session.tls = true;
        commands(Box::new(StreamOwned::new(conn, raw)), false, session)?;
    }
    Ok(())
}

fn commands(s: Box<dyn Stream>, offer_tls: bool, session: &mut Session) -> io::Result<Next> {
    let mut r = BufReader::new(s);
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Ok(Next::Quit);
        }
        let cmd = String::from_utf8_lossy(&line).trim_end().to_string();
        let verb = cmd
            .split(' ')
            .next()
            .unwrap_or_default()
            .to_ascii_uppercase();
        session.commands.push(cmd);
        let reply: &[u8] = match verb.as_str() {
            "EHLO" if offer_tls => b"250-sink\r\n250-STARTTLS\r\n250 AUTH PLAIN\r\n",
            "EHLO" => b"250-sink\r\n250-8BITMIME\r\n250 AUTH PLAIN\r\n",
            "STARTTLS" if offer_tls => {
                r.get_mut().write_all(b"220 go ahead\r\n")?;
                return Ok(Next::StartTls);
            }
            "AUTH" => b"235 authenticated\r\n",
            "MAIL" | "RCPT" | "RSET" | "NOOP" | "HELO" => b"250 ok\r\n",
            "DATA" => {
                r.get_mut().write_all(b"354 go on\r\n")?;
                let mut lines = Vec::new();
                loop {
                    line.clear();
                    if r.read_until(b'\n', &mut line)? == 0 {
                        return Ok(Next::Quit);
                    }
                    let text = String::from_utf8_lossy(&line)
                        .trim_end_matches("\r\n")
                        .to_string();
                    if text == "." {
                        break;
                    }
                    lines.push(text);
                }
                session.messages.push(lines.join("\r\n"));
                b"250 queued\r\n"
            }
            "QUIT" => {
                r.get_mut().write_all(b"221 bye\r\n")?;
                return Ok(Next::Quit);
            }
            _ => b"502 not implemented\r\n",
        };
        r.get_mut().write_all(reply)?;
    }
}
