//! hyper 1.x HTTP/1.1 peer for Cove's benchmark (bench/peers/README.md): the
//! `http` group on a tokio multi-thread runtime whose `worker_threads` comes
//! from WORKERS (default 1). No router: requests are matched on method and
//! path in order, `/greet/:name` by prefix. JSON is serialized per request
//! with serde_json.
//!
//! With TLS_CERT and TLS_KEY it serves HTTPS (rustls, ALPN h2 and http/1.1)
//! through hyper-util's auto builder, HTTP/2 or HTTP/1.1 per connection; with
//! H2C=1 the auto builder serves plain TCP, HTTP/2 to clients that start with
//! its preface (h2c prior knowledge). Otherwise: HTTP/1.1 only, as before.

use std::convert::Infallible;
use std::sync::OnceLock;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use serde::Serialize;
use tokio::net::{TcpListener, TcpStream};

mod tls;

/// How each accepted connection is served.
#[derive(Clone)]
enum Mode {
    Http1,
    H2c,
    Tls(tokio_rustls::TlsAcceptor),
}

static START: OnceLock<Instant> = OnceLock::new();

#[derive(Serialize)]
struct Message<'a> {
    message: &'a str,
}

#[derive(Serialize)]
struct Health<'a> {
    status: &'a str,
    runtime: &'a str,
    uptime: f64,
}

#[derive(Serialize)]
struct Greeting {
    greeting: String,
}

#[derive(Serialize)]
struct Echo<'a> {
    body: &'a str,
}

#[derive(Serialize)]
struct GreetingBody<'a> {
    greeting: String,
    body: &'a str,
}

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, content_type: &'static str, body: Bytes) -> Reply {
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn text(body: &'static str) -> Reply {
    reply(
        StatusCode::OK,
        "text/plain",
        Bytes::from_static(body.as_bytes()),
    )
}

fn json<T: Serialize>(value: &T) -> Reply {
    match serde_json::to_vec(value) {
        Ok(v) => reply(StatusCode::OK, "application/json", Bytes::from(v)),
        Err(e) => reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            Bytes::from(e.to_string()),
        ),
    }
}

fn not_found() -> Reply {
    reply(
        StatusCode::NOT_FOUND,
        "text/plain",
        Bytes::from_static(b"Not Found"),
    )
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `%XX`-decodes a path segment; `None` for a bad escape or non-UTF-8 result.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hi = hex(*b.get(i + 1)?)?;
            let lo = hex(*b.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `/greet/<name>` (one non-empty path segment) -> the decoded name.
fn greet_name(path: &str) -> Option<String> {
    let name = path.strip_prefix("/greet/")?;
    if name.is_empty() || name.contains('/') {
        return None;
    }
    percent_decode(name)
}

/// The request body as a string (invalid UTF-8 is replaced).
async fn body_string(req: Request<Incoming>) -> Result<String, hyper::Error> {
    let bytes = req.into_body().collect().await?.to_bytes();
    Ok(match String::from_utf8(bytes.to_vec()) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

async fn handle(req: Request<Incoming>) -> Result<Reply, hyper::Error> {
    let path = req.uri().path();
    if req.method() == Method::GET {
        return Ok(match path {
            "/hey" => text("hey"),
            "/hell" => text("hell"),
            "/hello" => text("Hello World!"),
            "/about" => text("about"),
            "/json" => json(&Message {
                message: "Hello, World!",
            }),
            "/health" => json(&Health {
                status: "ok",
                runtime: "rust",
                uptime: START.get().map_or(0.0, |s| s.elapsed().as_secs_f64()),
            }),
            _ => match greet_name(path) {
                Some(name) => json(&Greeting {
                    greeting: format!("Hello, {name}!"),
                }),
                None => not_found(),
            },
        });
    }
    if req.method() == Method::POST {
        if path == "/echo" {
            let body = body_string(req).await?;
            return Ok(json(&Echo { body: &body }));
        }
        if let Some(name) = greet_name(path) {
            let body = body_string(req).await?;
            return Ok(json(&GreetingBody {
                greeting: format!("Hello, {name}!"),
                body: &body,
            }));
        }
    }
    Ok(not_found())
}

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

fn version() {
    // The crate versions are the ones Cargo.lock pins, recorded by build.rs.
    println!(
        "hyper {}, tokio {}, {}",
        env!("HYPER_VERSION"),
        env!("TOKIO_VERSION"),
        env!("RUSTC_VERSION")
    );
}

/// Serves one connection in `mode` until the client closes it.
async fn serve(stream: TcpStream, mode: Mode) {
    let service = service_fn(|req| async move {
        Ok::<_, Infallible>(
            handle(req)
                .await
                .unwrap_or_else(|_| reply(StatusCode::BAD_REQUEST, "text/plain", Bytes::new())),
        )
    });
    match mode {
        Mode::Http1 => {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
        Mode::H2c => {
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
        Mode::Tls(acceptor) => {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), service)
                .await;
        }
    }
}

fn mode() -> Mode {
    match (std::env::var("TLS_CERT"), std::env::var("TLS_KEY")) {
        (Ok(cert), Ok(key)) if !cert.is_empty() => match tls::acceptor(&cert, &key) {
            Ok(a) => Mode::Tls(a),
            Err(e) => {
                eprintln!("hyper: TLS: {e}");
                std::process::exit(1);
            }
        },
        _ if std::env::var("H2C").is_ok_and(|v| v == "1") => Mode::H2c,
        _ => Mode::Http1,
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--version") {
        version();
        return;
    }
    START.get_or_init(Instant::now);
    let workers: usize = env_number("WORKERS").filter(|&n| n > 0).unwrap_or(1);
    let port: u16 = env_number("PORT").unwrap_or(8011);
    let mode = mode();
    let name = match mode {
        Mode::Http1 => "http/1.1",
        Mode::H2c => "http/1.1 and h2c",
        Mode::Tls(_) => "https: h2 and http/1.1 by ALPN",
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_io()
        .build()
        .expect("cannot build the tokio runtime");
    rt.block_on(async move {
        let listener = match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("hyper: cannot listen on 127.0.0.1:{port}: {e}");
                std::process::exit(1);
            }
        };
        println!(
            "hyper listening on 127.0.0.1:{port} (pid {}, worker_threads={workers}, {name})",
            std::process::id()
        );
        loop {
            let stream = match listener.accept().await {
                Ok((s, _)) => s,
                Err(_) => continue,
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(serve(stream, mode.clone()));
        }
    });
}
