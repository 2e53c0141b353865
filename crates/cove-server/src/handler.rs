//! Request handling: the script pipeline, and a script-free baseline used by
//! the benchmark to measure what the HTTP layer alone costs.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::net::SocketAddr;
use std::rc::Rc;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::{Body as _, Incoming};
use hyper::http::request::Parts;
use tokio::sync::Notify;

use cove_core::audit::{self, RequestScope};
use cove_core::{
    log, run_main, run_pre, App, DbTurn, Engine, Exchange, Feed, Flow, JobWork, Publisher, Step,
    Target, TurnTx,
};

use crate::convert::{closing, request_head, to_http, HttpResponse};
use crate::ws::Sockets;

mod socket;
use crate::dev_error::DevErrors;
use crate::live::Live;
use crate::observe::{Observe, Seen};
use crate::static_files::{self, StaticFiles};
use crate::ServerConfig;

/// Something that turns a request into a response on one worker.
pub trait Handler: 'static {
    /// Answer `req`, which came from `peer` (the socket's other end).
    fn handle(
        self: Rc<Self>,
        req: hyper::Request<Incoming>,
        peer: std::net::SocketAddr,
    ) -> impl Future<Output = HttpResponse>;

    /// Called once on the worker's thread, inside its event loop, before the
    /// first connection is accepted; a handler may spawn local tasks here
    /// (a reloading one follows reload commands). Nothing by default.
    fn start(self: &Rc<Self>) {}

    /// Pause the database's group commit, or resume it (a reload: see
    /// `crate::reload`). Nothing by default.
    fn pause_group_commit(&self, _paused: bool) {}
}

/// Runs requests through the app's middleware and handlers.
pub struct ScriptHandler<A> {
    app: A,
    max_body: usize,
    /// A commit of the open write group is scheduled for the end of this turn.
    commit_scheduled: Cell<bool>,
    /// Woken after each group commit.
    committed: Notify,
    /// The app's `static/` files, served after pre-body middleware.
    statics: Option<StaticFiles>,
    /// `cove dev`: script errors answer with the error page.
    dev_errors: Option<DevErrors>,
    /// Event streams open on this worker, and the feed of published
    /// messages they follow once the worker starts.
    live: Rc<Live>,
    feed: RefCell<Option<Feed>>,
    /// Sends what a request published, once its response is sent.
    publisher: Option<Publisher>,
    /// WebSocket connections (`app.ws` routes) on this worker.
    sockets: Sockets,
    /// `--metrics`, `--access-log`: what this worker records of each
    /// request; `None` (both off) costs a request a branch at each end.
    observe: Option<Box<Observe>>,
}

impl<A: App + 'static> ScriptHandler<A> {
    /// Serve `app` with the body limit of `config`, and, when it asks for
    /// them (`cove dev`), error pages.
    pub fn new(app: A, config: &ServerConfig) -> Self {
        let live = Rc::new(Live::new(config.http.idle_timeout));
        ScriptHandler {
            app,
            max_body: config.limits.max_body,
            commit_scheduled: Cell::new(false),
            committed: Notify::new(),
            statics: None,
            dev_errors: config.dev_errors.clone().map(DevErrors::new),
            live: live.clone(),
            feed: RefCell::new(None),
            publisher: None,
            sockets: Sockets::new(config.ws.clone(), live, None),
            observe: Observe::for_this_worker(config.access_log.as_ref()),
        }
    }

    /// Carry the messages of `feed` (the process's pub/sub hub) to this
    /// worker's event streams, and send what requests publish with
    /// `publisher` (the same hub).
    pub fn with_pubsub(mut self, feed: Feed, publisher: Publisher) -> Self {
        *self.feed.borrow_mut() = Some(feed);
        self.sockets.set_publisher(publisher.clone());
        self.publisher = Some(publisher);
        self
    }

    /// Serve `static/` of `files` at `/static/*` (Hull §8).
    pub fn with_static_files(mut self, files: cove_core::AppFiles) -> Self {
        self.statics = Some(StaticFiles::new(files));
        self
    }

    /// If a write group or a read snapshot is open, end it once the requests
    /// that are ready now have run. A write group also waits for the next
    /// poll for I/O (`yield_now` defers past it), so the writes of the
    /// requests it finds join the group. A read snapshot does not: the extra
    /// poll would cost a lone request more than the snapshot saves it.
    fn schedule_commit(self: &Rc<Self>) {
        if self.commit_scheduled.get() {
            return;
        }
        let tx = self.app.db_turn().turn_tx();
        if tx == TurnTx::None {
            return;
        }
        self.commit_scheduled.set(true);
        let this = self.clone();
        tokio::task::spawn_local(async move {
            if tx == TurnTx::Write {
                tokio::task::yield_now().await;
            } else {
                behind_ready_tasks().await;
            }
            this.commit_scheduled.set(false);
            // A failure is logged with its reason, and counted, where it
            // happens (cove-db); its requests learn of it in `committed`.
            this.app.db_turn().commit_group();
            this.committed.notify_waiters();
        });
    }

    /// Wait until write group `group` has finished; false if it failed.
    async fn committed(self: &Rc<Self>, group: u64) -> bool {
        loop {
            let notified = self.committed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(ok) = self.app.db_turn().group_result(group) {
                return ok;
            }
            self.schedule_commit();
            notified.await;
        }
    }
}

/// Returns once every task that is ready now has run: the task wakes itself,
/// which queues it behind them (`yield_now` would wait for an I/O poll too).
async fn behind_ready_tasks() {
    let mut queued = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut queued, true) {
            std::task::Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await;
}

/// `run` in the request's audit scope (kept in the exchange). Out of line:
/// with the log off a request pays the flag check in `handle` and one
/// `is_some` per call (measured on /greet: ~10 instructions a request, ~30
/// with the scope a local of `handle` and this inlined into `drive`).
#[inline(never)]
fn in_scope<E: Engine>(
    engine: &E,
    ex: &mut Exchange,
    st: &mut E::State,
    run: fn(&E, &mut Exchange, &mut E::State) -> Step,
) -> Step {
    let entered = ex.audit.as_ref().map(RequestScope::enter);
    let step = run(engine, ex, st);
    drop(entered);
    step
}

enum BodyError {
    /// Over the limit; the rest of the body, not read.
    TooLarge(Incoming),
    Broken,
}

/// An HTTP/2 request refused for its body's size: the rest of the body is
/// read (up to [`DRAIN`], for at most [`DRAIN_TIME`]) and dropped, after the
/// 413 has gone out. A stream whose body is left unread is reset, and a
/// client still sending it (curl, browsers) reports the reset, not the 413.
/// HTTP/1.1 closes the connection instead.
const DRAIN: usize = 8 << 20;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

#[cold]
fn drain_h2(version: hyper::Version, mut body: Incoming) {
    if version != hyper::Version::HTTP_2 {
        return;
    }
    tokio::task::spawn_local(async move {
        let read = async {
            let mut seen = 0usize;
            while let Some(Ok(frame)) = body.frame().await {
                seen += frame.data_ref().map_or(0, |d| d.len());
                if seen > DRAIN {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(DRAIN_TIME, read).await;
    });
}

/// The whole body, at most `max` bytes. A body that arrives in one piece
/// (the usual case) is kept as it came, without a copy.
async fn read_body(mut body: Incoming, max: usize) -> Result<Option<Bytes>, BodyError> {
    let mut first: Option<Bytes> = None;
    let mut joined: Option<BytesMut> = None;
    let mut len = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(|_| BodyError::Broken)?.into_data() else {
            continue; // trailers
        };
        len += data.len();
        if len > max {
            return Err(BodyError::TooLarge(body));
        }
        if let Some(buf) = joined.as_mut() {
            buf.extend_from_slice(&data);
        } else if let Some(prev) = first.take() {
            let mut buf = BytesMut::with_capacity(len);
            buf.extend_from_slice(&prev);
            buf.extend_from_slice(&data);
            joined = Some(buf);
        } else if !data.is_empty() {
            first = Some(data);
        }
        // A body whose declared length has arrived ends here: asking hyper
        // for the end is one more trip through its body channel.
        if body.is_end_stream() {
            break;
        }
    }
    Ok(joined.map(BytesMut::freeze).or(first))
}

/// Run a pipeline phase; while a script waits on blocking work (a password
/// hash, an outbound request), the work runs on tokio's blocking pool, and
/// a future (a PostgreSQL query) is awaited here; either way this worker
/// serves its other connections meanwhile. `before_wait` runs first.
/// With the audit log on, the script runs in the request's audit scope:
/// entered at every resume, for other requests run between them.
async fn drive<E: Engine>(
    engine: &E,
    ex: &mut Exchange,
    st: &mut E::State,
    run: fn(&E, &mut Exchange, &mut E::State) -> Step,
    before_wait: impl Fn(),
) -> Flow {
    loop {
        let step = if ex.audit.is_some() {
            in_scope(engine, ex, st, run)
        } else {
            run(engine, ex, st)
        };
        match step {
            Step::Done(flow) => return flow,
            Step::Wait(job) => {
                before_wait();
                let output = match job.into_work() {
                    JobWork::Future(fut) => fut.await,
                    JobWork::Blocking(job) => {
                        match tokio::task::spawn_blocking(move || job.run()).await {
                            Ok(output) => output,
                            // The job panicked: resume with something the engine
                            // does not expect, which it reports as an error.
                            Err(e) => Box::new(e.to_string()),
                        }
                    }
                };
                ex.resume = Some(output);
            }
        }
    }
}

impl<A: App + 'static> Handler for ScriptHandler<A>
where
    <A::Engine as Engine>::State: 'static,
{
    fn pause_group_commit(&self, paused: bool) {
        self.app.db_turn().pause_group_commit(paused);
    }

    fn start(self: &Rc<Self>) {
        if let Some(feed) = self.feed.borrow_mut().take() {
            self.live.follow(feed);
        }
    }

    async fn handle(
        self: Rc<Self>,
        req: hyper::Request<Incoming>,
        peer: std::net::SocketAddr,
    ) -> HttpResponse {
        let (mut parts, body) = req.into_parts();
        let mut seen = self.observe.as_deref().map(|o| o.begin(&parts));
        let mut res = 'res: {
            // hyper has read the framing: an exact size is the Content-Length
            // (0 when there is no body); a chunked body has none. Cheaper than
            // looking the two headers up again (~170 instructions).
            let declared = body.size_hint().exact();
            if declared.is_some_and(|n| n > self.max_body as u64) {
                drain_h2(parts.version, body);
                break 'res self.too_large();
            }
            let mut head = request_head(&mut parts);
            let mut plan = self.app.routes().plan(&head.method, &head.path);
            if let Target::Route { params, handler } | Target::Socket { params, handler } =
                &mut plan.target
            {
                head.params = std::mem::take(params);
                if let Some(seen) = &mut seen {
                    seen.route = Some(*handler);
                }
            }
            let engine = self.app.engine();
            // A script that waits holds no transaction (it cannot wait inside
            // db.batch), so its writes so far are committed now: the write lock
            // must not stay taken while an outbound request runs, or every other
            // worker that writes blocks, and a request to this server itself
            // (a webhook to its own receiver) waits on itself.
            let commit = || self.schedule_commit();
            let mut ex = Exchange::new(head, plan);
            let mut state = Default::default();
            if audit::enabled() {
                ex.audit = Some(RequestScope::new());
            }
            if !ex.plan.pre.is_empty() {
                let flow = drive(engine, &mut ex, &mut state, run_pre, commit).await;
                if ex.turn.left_open {
                    self.schedule_commit();
                }
                if flow == Flow::Stop {
                    break 'res match ex.turn.touched {
                        None => self.finish(&mut ex),
                        Some(group) => self.respond_committed(&mut ex, group).await,
                    };
                }
            }
            // Hull runs static files as the last pre-body middleware: after the
            // app's, and routing gets the request when there is no such file.
            if self.statics.is_some() && static_files::wants(&ex.req) {
                // Boxed so that every other request's future stays as small as
                // it was (measured: the inlined states cost ~150 instructions).
                if let Some(res) = Box::pin(self.serve_static(&ex)).await {
                    break 'res res;
                }
            }
            if declared != Some(0) {
                match read_body(body, self.max_body).await {
                    Ok(bytes) => ex.req.body = bytes,
                    Err(BodyError::TooLarge(rest)) => {
                        drain_h2(parts.version, rest);
                        break 'res self.too_large();
                    }
                    Err(BodyError::Broken) => break 'res closing(400, "Bad Request"),
                }
            }
            let flow = drive(engine, &mut ex, &mut state, run_main, commit).await;
            // Its reads may have left the turn's read snapshot open.
            if ex.turn.left_open {
                self.schedule_commit();
            }
            // Only a WebSocket endpoint's request goes on past its handler.
            if flow == Flow::Continue {
                break 'res Box::pin(self.upgrade(&mut parts, ex, state)).await;
            }
            // A response that acknowledges no write goes out without a wait.
            // The exchange stays where it is, lent: moved into the wait's
            // future it was copied (an insert: 150-200 instructions).
            match ex.turn.touched {
                None => self.finish(&mut ex),
                Some(group) => self.respond_committed(&mut ex, group).await,
            }
        };
        if let Some(seen) = seen {
            self.observed(seen, &parts, peer, &mut res);
        }
        res
    }
}

impl<A: App + 'static> ScriptHandler<A> {
    /// 413, counted.
    #[cold]
    fn too_large(&self) -> HttpResponse {
        if let Some(o) = &self.observe {
            o.too_large();
        }
        closing(413, "Payload Too Large")
    }

    /// Record the request of `seen` (`head`, from `peer`), answered
    /// with `res`.
    #[inline(never)]
    fn observed(&self, seen: Seen<'_>, head: &Parts, peer: SocketAddr, res: &mut HttpResponse) {
        if let Some(o) = &self.observe {
            let heap = || self.app.engine().heap_used();
            o.end(&seen, head, peer, res, self.app.routes(), heap);
        }
    }

    /// The static file the request names, if there is one, sent once the
    /// writes of the middleware that ran before it are committed.
    async fn serve_static(self: &Rc<Self>, ex: &Exchange) -> Option<HttpResponse> {
        let res = self
            .statics
            .as_ref()?
            .serve(&ex.req, &ex.res.headers)
            .await?;
        if let Some(group) = ex.turn.touched {
            self.schedule_commit();
            if !self.committed(group).await {
                return Some(to_http(uncommitted()));
            }
        }
        Some(res)
    }

    /// The response for `ex`, its script errors logged (and, in `cove dev`,
    /// shown).
    fn finish(&self, ex: &mut Exchange) -> HttpResponse {
        for err in &ex.errors {
            log::error(&format!("{} {}: {}", ex.req.method, ex.req.path, err));
        }
        if let Some(o) = self.observe.as_deref().filter(|_| !ex.errors.is_empty()) {
            o.errors(&ex.errors, &ex.req.method, &ex.req.path);
        }
        if let Some(dev) = &self.dev_errors {
            dev.apply(ex);
        }
        let mut res = std::mem::take(&mut ex.res);
        match res.live.take() {
            None => to_http(res),
            Some(live) => self.live_response(*live, res, ex.errors.is_empty()),
        }
    }

    /// Send what the request published, unless one of its scripts failed
    /// (a failure after the handler, in a post middleware, leaves the
    /// handler's response in place); then the response, or the event
    /// stream it is.
    #[cold]
    fn live_response(
        &self,
        live: cove_core::LiveParts,
        res: cove_core::Response,
        succeeded: bool,
    ) -> HttpResponse {
        if let Some(publisher) = self.publisher.as_ref().filter(|_| succeeded) {
            for message in live.outbox {
                publisher(message);
            }
        }
        match live.events {
            None => to_http(res),
            Some(stream) => self.events(stream, res),
        }
    }

    /// An event stream, if the handler's status says success; else its
    /// response as it is.
    fn events(&self, stream: cove_core::EventStream, res: cove_core::Response) -> HttpResponse {
        let success = (200..300).contains(&res.status);
        let http = to_http(res);
        if success {
            self.live.events(stream, http)
        } else {
            http
        }
    }

    /// Send the response once the writes it acknowledges (those of write
    /// group `group`) are committed.
    async fn respond_committed(self: &Rc<Self>, ex: &mut Exchange, group: u64) -> HttpResponse {
        self.schedule_commit();
        if !self.committed(group).await {
            ex.res = uncommitted();
        }
        self.finish(ex)
    }
}

/// The answer to a request whose writes did not commit (disk full, I/O
/// error): 503 with `Retry-After`, for the storage and not the request is at
/// fault. Nothing of the handler's response survives: its headers may
/// describe writes that were lost (a session cookie, a Location).
fn uncommitted() -> cove_core::Response {
    let mut res = cove_core::Response::new();
    res.unavailable();
    res
}

/// The benchmark's measure of the HTTP layer alone, with no script:
/// `Hello World!` (text) for `/hello`, `{"message":"Hello, World!"}` for
/// any other path.
pub struct Baseline;

impl Handler for Baseline {
    async fn handle(
        self: Rc<Self>,
        req: hyper::Request<Incoming>,
        _peer: std::net::SocketAddr,
    ) -> HttpResponse {
        let mut res = cove_core::Response::new();
        if req.uri().path() == "/hello" {
            res.text(Bytes::from_static(b"Hello World!"));
        } else {
            res.json(Bytes::from_static(br#"{"message":"Hello, World!"}"#));
        }
        to_http(res)
    }
}
