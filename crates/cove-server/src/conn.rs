//! One accepted connection: the TLS handshake and its ALPN choice, or the
//! h2c preface on a plain port, then hyper's HTTP/1.1 or HTTP/2 over a
//! [`Timed`] stream (the header and idle clocks, on the decrypted bytes).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::time::Duration;

use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;

use crate::config::{HttpLimits, Protocols};
use crate::convert::HttpResponse;
use crate::drain::Watcher;
use crate::io::{H2Io, Io};
use crate::timeouts::{Activity, Timed};
use crate::{reject, Handler};

/// Request headers allowed (more → 431 from hyper). hyper's own default:
/// up to it, the parser keeps them on the stack.
const MAX_HEADERS: usize = 100;

/// hyper's default read buffer limit (~400 KiB); a head must fit in it.
const HYPER_MAX_BUF: usize = 8192 + 4096 * 100;

/// What the first bytes of an HTTP/2 connection are (RFC 9113 §3.4).
const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Runs HTTP/2's tasks (one per stream) on the worker's own thread: the
/// handler and its script VM never leave it.
#[derive(Clone, Copy)]
pub(crate) struct LocalExec;

impl<F: Future + 'static> hyper::rt::Executor<F> for LocalExec {
    fn execute(&self, fut: F) {
        tokio::task::spawn_local(fut);
    }
}

/// How one worker serves its connections.
pub(crate) struct Server<H> {
    handler: Rc<H>,
    limits: HttpLimits,
    h1: http1::Builder,
    h2: http2::Builder<LocalExec>,
    tls: Option<TlsAcceptor>,
    h2c: bool,
    /// The worker drains: HTTP/1.1 responses close their connection (drain.rs).
    pub(crate) draining: Rc<std::cell::Cell<bool>>,
}

impl<H: Handler> Server<H> {
    pub(crate) fn new(handler: Rc<H>, limits: HttpLimits, protocols: &Protocols) -> Server<H> {
        let mut h1 = http1::Builder::new();
        h1.keep_alive(true)
            .max_headers(MAX_HEADERS)
            // hyper answers a head over this with 431 and closes.
            .max_header_size(limits.max_header)
            .max_buf_size(limits.max_header.max(HYPER_MAX_BUF))
            // `Timed` keeps the header and idle timeouts: hyper's one timer
            // cannot tell a slow head from an idle connection, nor send 408.
            .header_read_timeout(None);
        let mut h2 = http2::Builder::new(LocalExec);
        h2.timer(TokioTimer::new())
            .max_concurrent_streams(limits.h2_max_streams)
            .max_header_list_size(u32::try_from(limits.max_header).unwrap_or(u32::MAX))
            // Pings find dead peers on connections that sit waiting.
            .keep_alive_interval(Some(limits.idle_timeout))
            .keep_alive_timeout(Duration::from_secs(20));
        let tls = protocols
            .tls
            .as_ref()
            .map(|source| TlsAcceptor::from(source.server_config()));
        Server {
            handler,
            limits,
            h1,
            h2,
            tls,
            h2c: protocols.h2c,
            draining: Rc::default(),
        }
    }

    /// Serve `stream` on a task of its own until it closes or, once
    /// `watcher`'s shutdown starts, its requests in progress are answered.
    pub(crate) fn accept(self: &Rc<Self>, stream: TcpStream, peer: SocketAddr, watcher: Watcher) {
        let _ = stream.set_nodelay(true);
        if self.tls.is_none() && !self.h2c {
            // Plain HTTP/1.1, the common case: straight to hyper.
            tokio::task::spawn_local(self.h1(Io::Plain(stream), peer, watcher));
            return;
        }
        let me = self.clone();
        tokio::task::spawn_local(async move {
            let within = me.limits.header_timeout;
            if let Some(tls) = &me.tls {
                let Ok(Ok(stream)) = tokio::time::timeout(within, tls.accept(stream)).await else {
                    return; // not TLS, too slow, or no common ground: nothing to answer
                };
                match stream.get_ref().1.alpn_protocol() {
                    Some(b"h2") => {
                        let _ = me.h2(Io::Tls(Box::new(stream)), peer, watcher).await;
                    }
                    // An ACME CA's check: answered by the handshake itself.
                    Some(crate::tls::ACME_TLS_ALPN) => {}
                    _ => me.h1(Io::Tls(Box::new(stream)), peer, watcher).await,
                }
            } else {
                match tokio::time::timeout(within, starts_h2(&stream)).await {
                    Ok(Ok(true)) => {
                        let _ = me.h2(Io::Plain(stream), peer, watcher).await;
                    }
                    Ok(Ok(false)) => me.h1(Io::Plain(stream), peer, watcher).await,
                    _ => {}
                }
            }
        });
    }

    /// HTTP/1.1, served without hyper's upgrades: with them, hyper keeps
    /// the socket as a `dyn` object for the upgraded connection, and its
    /// read and write functions, no longer called from one place only, are
    /// not inlined into hyper's (+200 instructions a request, io.rs; with
    /// the larger connection state, +300). A 101 ends hyper's connection
    /// anyway: when the service answered it for a WebSocket, the socket
    /// (and the bytes hyper read past the request) is taken back from
    /// hyper and the WebSocket runs on a task of its own, with the
    /// connection's drain watcher ([`upgrade`]).
    fn h1(
        &self,
        stream: Io,
        peer: SocketAddr,
        watcher: Watcher,
    ) -> impl Future<Output = ()> + use<H> {
        let stream = Timed::new(stream, &self.limits);
        let service = self.service(stream.activity(), peer);
        let mut conn = self.h1.serve_connection(TokioIo::new(stream), service);
        async move {
            let mut watcher = watcher;
            // Client resets and timeouts end a connection; nothing to report.
            let closing = watcher.watch_after(Pin::new(&mut conn), crate::drain::H1_GRACE);
            if closing.await.is_ok() {
                upgrade(conn, watcher);
            }
        }
    }

    fn h2(
        &self,
        stream: Io,
        peer: SocketAddr,
        watcher: Watcher,
    ) -> impl Future<Output = hyper::Result<()>> + use<H> {
        let stream = Timed::multiplexed(stream, &self.limits);
        let service = self.service_h2(stream.activity(), peer);
        let conn = self
            .h2
            .serve_connection(TokioIo::new(H2Io(stream)), service);
        async move {
            let mut watcher = watcher;
            watcher.watch(pin!(conn)).await
        }
    }

    /// HTTP/1.1's service: one request at a time, answered in order. A
    /// 101 that opens a WebSocket leaves it with the connection's
    /// [`Activity`] for [`upgrade`].
    fn service(
        &self,
        activity: Activity,
        peer: SocketAddr,
    ) -> impl hyper::service::Service<
        hyper::Request<hyper::body::Incoming>,
        Response = HttpResponse,
        Error = Infallible,
        Future = impl Future<Output = Result<HttpResponse, Infallible>> + 'static,
    > + 'static {
        let handler = self.handler.clone();
        let max_url = self.limits.max_url;
        let draining = self.draining.clone();
        service_fn(move |req| {
            // Also whether the head had both Content-Length and
            // Transfer-Encoding, which hyper hides (timeouts.rs).
            let framing_conflict = activity.busy();
            let (h, activity) = (handler.clone(), activity.clone());
            let draining = draining.clone();
            async move {
                let mut res = match reject::check(&req, max_url, framing_conflict) {
                    Some(refused) => refused,
                    None => h.handle(req, peer).await,
                };
                activity.answered();
                if res.status() == hyper::StatusCode::SWITCHING_PROTOCOLS {
                    return Ok(switching(res, &activity));
                }
                if draining.get() {
                    close_after(&mut res);
                }
                Ok::<_, Infallible>(res)
            }
        })
    }

    /// HTTP/2's: `:authority` becomes `Host`, and a stream the client
    /// resets (its future dropped unfinished) counts as answered. Apart
    /// from HTTP/1.1's so that its requests pay for neither.
    fn service_h2(
        &self,
        activity: Activity,
        peer: SocketAddr,
    ) -> impl hyper::service::Service<
        hyper::Request<hyper::body::Incoming>,
        Response = HttpResponse,
        Error = Infallible,
        Future = impl Future<Output = Result<HttpResponse, Infallible>> + 'static,
    > + 'static {
        let handler = self.handler.clone();
        let max_url = self.limits.max_url;
        service_fn(move |mut req| {
            reject::host_from_authority(&mut req);
            activity.busy();
            let in_app = InApp(activity.clone());
            let h = handler.clone();
            async move {
                let res = match reject::check(&req, max_url, false) {
                    Some(refused) => refused,
                    None => h.handle(req, peer).await,
                };
                drop(in_app);
                Ok::<_, Infallible>(res)
            }
        })
    }
}

/// The worker drains: this response ends its connection.
#[cold]
#[inline(never)]
fn close_after(res: &mut HttpResponse) {
    res.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
}

/// A request in the app's hands; answered when dropped, also when an
/// HTTP/2 stream is reset and its future dropped unfinished.
struct InApp(Activity);

impl Drop for InApp {
    fn drop(&mut self) {
        self.0.answered();
    }
}

/// A 101 from the HTTP/1.1 service: the WebSocket its body carries, if
/// any, is left with the connection (see [`upgrade`]). Out of line and by
/// value: borrowing the response in the service instead (its body, or its
/// extensions) cost every response a `memcpy` of it, +29 instructions a
/// request; this way the check costs about +20.
#[cold]
#[inline(never)]
fn switching(res: HttpResponse, activity: &Activity) -> HttpResponse {
    if let Some(ws) = res.body().take_upgrade() {
        activity.upgrade(ws);
    }
    res
}

/// After hyper's HTTP/1.1 connection has ended well: if the service
/// answered 101 for a WebSocket, it runs on a task of its own over the
/// socket hyper gives back, keeping the drain's `watcher`.
fn upgrade<S>(conn: http1::Connection<TokioIo<Timed<Io>>, S>, watcher: Watcher)
where
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = crate::Body>,
{
    let parts = conn.into_parts();
    let (io, activity) = parts.io.into_inner().into_parts();
    if let Some(ws) = activity.take_upgrade() {
        tokio::task::spawn_local(ws.run(io, parts.read_buf, watcher));
    }
}

/// Whether a plain connection opens with HTTP/2's preface. Waits for the
/// first bytes; a preface split over several reads is waited for too.
async fn starts_h2(stream: &TcpStream) -> std::io::Result<bool> {
    let mut buf = [0u8; H2_PREFACE.len()];
    loop {
        let n = stream.peek(&mut buf).await?;
        if n == 0 || buf[..n] != H2_PREFACE[..n] {
            return Ok(false);
        }
        if n == H2_PREFACE.len() {
            return Ok(true);
        }
        // The rest of a preface begun: peek returns at once while bytes
        // wait, so give the client a moment rather than spin.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
