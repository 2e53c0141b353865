//! The `ws` table's load client: `cove-bench --ws-client echo|broadcast
//! ...`, started by the harness pinned to the load core like wrk. One
//! thread (a tokio current-thread runtime), its own minimal WebSocket
//! framing (wsproto.rs), so that it does as little as it can per message.
//!
//! * **echo**: N connections; each sends a text message and waits for its
//!   echo, again and again, until the deadline. Counts round trips and
//!   their latency.
//! * **broadcast**: N subscribers and one publisher on `/broadcast`. The
//!   publisher keeps at most `window` broadcasts in flight: it sends the
//!   next one once every subscriber has received an earlier one, so no
//!   server queues more than `window` messages for a subscriber (Cove closes
//!   a client with 1008 at 256). Counts deliveries to the subscribers (not
//!   the publisher's own copies) and, per broadcast, the time from its send
//!   to its last delivery.
//!
//! All connections are open (and, for broadcast, every subscriber has
//! received a message) before the measured window starts; the server's CPU
//! is read from /proc at its start and end, so connecting and closing are
//! not in it. The report (`key value` lines, [`WsReport`]) also gives this
//! process's own CPU over the window: near 100% of its core, the client is
//! the bottleneck.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use crate::wsproto::{self, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT};

/// What one client run does.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientArgs {
    pub broadcast: bool,
    pub addr: SocketAddr,
    pub path: String,
    /// Echo connections, or broadcast subscribers (the publisher is one more).
    pub connections: u32,
    pub seconds: f64,
    /// The server whose process tree's CPU is read over the window.
    pub server_pid: Option<u32>,
    /// Broadcasts in flight at most.
    pub window: u32,
    /// Bytes of each message (text).
    pub size: usize,
}

/// Defaults of the `ws` table.
pub const MESSAGE_BYTES: usize = 32;
pub const WINDOW: u32 = 16;
pub const SUBSCRIBERS: u32 = 1000;

/// `ws://127.0.0.1:PORT/path` → address and path.
pub fn split_url(url: &str) -> Result<(SocketAddr, String)> {
    let rest = url
        .strip_prefix("ws://")
        .ok_or_else(|| anyhow!("{url:?}: not a ws:// URL"))?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let addr = host
        .parse()
        .with_context(|| format!("{url:?}: the host must be IP:port"))?;
    Ok((addr, path))
}

pub fn parse_args(args: &[String]) -> Result<ClientArgs> {
    let mut it = args.iter();
    let broadcast = match it.next().map(String::as_str) {
        Some("echo") => false,
        Some("broadcast") => true,
        other => bail!("--ws-client: echo or broadcast, not {other:?}"),
    };
    let (mut url, mut connections, mut seconds, mut pid) = (None, None, None, None);
    let (mut window, mut size) = (WINDOW, MESSAGE_BYTES);
    while let Some(a) = it.next() {
        let v = it
            .next()
            .with_context(|| format!("--ws-client: {a} needs a value"))?;
        let bad = || anyhow!("--ws-client: {a} {v:?} is not a number");
        match a.as_str() {
            "--url" => url = Some(split_url(v)?),
            "--connections" => connections = Some(v.parse().map_err(|_| bad())?),
            "--seconds" => seconds = Some(v.parse::<f64>().map_err(|_| bad())?),
            "--server-pid" => pid = Some(v.parse().map_err(|_| bad())?),
            "--window" => window = v.parse().map_err(|_| bad())?,
            "--size" => size = v.parse().map_err(|_| bad())?,
            _ => bail!("--ws-client: unknown argument {a:?}"),
        }
    }
    let (addr, path) = url.context("--ws-client: --url is required")?;
    let connections: u32 = connections.unwrap_or(if broadcast { SUBSCRIBERS } else { 50 });
    let seconds = seconds.unwrap_or(5.0);
    if connections == 0 || window == 0 || seconds <= 0.0 {
        bail!("--ws-client: --connections, --window and --seconds must be positive");
    }
    if size < 24 {
        bail!("--ws-client: --size must be at least 24 (a broadcast carries its number)");
    }
    Ok(ClientArgs {
        broadcast,
        addr,
        path,
        connections,
        seconds,
        server_pid: pid,
        window,
        size,
    })
}

/// What a client run prints: one `key value` line each.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WsReport {
    pub mode: String,
    pub connections: u32,
    /// Echo round trips, or deliveries to subscribers, within the window.
    pub messages: u64,
    /// Broadcasts whose every delivery arrived within the window.
    pub broadcasts: u64,
    pub duration_s: f64,
    /// Echo: round-trip time; broadcast: send to last delivery.
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub avg_us: Option<f64>,
    /// The server tree's CPU ticks over the window (None: no pid given).
    pub server_ticks: Option<u64>,
    /// This client's CPU over the window, in % of one core.
    pub client_cpu_pct: f64,
    /// Connections that failed (closed, protocol errors, wrong echoes).
    pub errors: u64,
    pub first_error: Option<String>,
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}"))
}

impl WsReport {
    pub fn format(&self) -> String {
        let mut out = String::new();
        out += &format!("mode {}\n", self.mode);
        out += &format!("connections {}\n", self.connections);
        out += &format!("messages {}\n", self.messages);
        out += &format!("broadcasts {}\n", self.broadcasts);
        out += &format!("duration_s {:.6}\n", self.duration_s);
        out += &format!("p50_us {}\n", opt(self.p50_us));
        out += &format!("p99_us {}\n", opt(self.p99_us));
        out += &format!("avg_us {}\n", opt(self.avg_us));
        out += &format!(
            "server_ticks {}\n",
            self.server_ticks.map_or("-".into(), |t| t.to_string())
        );
        out += &format!("client_cpu_pct {:.1}\n", self.client_cpu_pct);
        out += &format!("errors {}\n", self.errors);
        if let Some(e) = &self.first_error {
            out += &format!("first_error {}\n", e.replace('\n', " "));
        }
        out
    }

    /// Parse [`WsReport::format`]'s output (other lines are ignored).
    pub fn parse(text: &str) -> Result<WsReport> {
        let mut r = WsReport::default();
        let (mut saw_messages, mut saw_duration) = (false, false);
        for line in text.lines() {
            let Some((key, value)) = line.trim().split_once(' ') else {
                continue;
            };
            let value = value.trim();
            let num = |what: &str| -> Result<f64> {
                value
                    .parse()
                    .map_err(|_| anyhow!("ws client output: bad {what} {value:?}"))
            };
            let opt_num = |what: &str| -> Result<Option<f64>> {
                if value == "-" {
                    Ok(None)
                } else {
                    num(what).map(Some)
                }
            };
            match key {
                "mode" => r.mode = value.to_string(),
                "connections" => r.connections = num(key)? as u32,
                "messages" => {
                    r.messages = value
                        .parse()
                        .map_err(|_| anyhow!("ws client output: bad messages {value:?}"))?;
                    saw_messages = true;
                }
                "broadcasts" => r.broadcasts = num(key)? as u64,
                "duration_s" => {
                    r.duration_s = num(key)?;
                    saw_duration = true;
                }
                "p50_us" => r.p50_us = opt_num(key)?,
                "p99_us" => r.p99_us = opt_num(key)?,
                "avg_us" => r.avg_us = opt_num(key)?,
                "server_ticks" => r.server_ticks = opt_num(key)?.map(|t| t as u64),
                "client_cpu_pct" => r.client_cpu_pct = num(key)?,
                "errors" => r.errors = num(key)? as u64,
                "first_error" => r.first_error = Some(value.to_string()),
                _ => {}
            }
        }
        if !saw_messages || !saw_duration {
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            bail!("the ws client produced no report (first line: {first:?})");
        }
        Ok(r)
    }

    /// Messages per second over the window.
    pub fn rate(&self) -> f64 {
        if self.duration_s > 0.0 {
            self.messages as f64 / self.duration_s
        } else {
            0.0
        }
    }
}

/// The `pct` percentile (nearest rank) of sorted values.
pub fn percentile(sorted: &[u64], pct: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (pct / 100.0 * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// p50, p99 and mean of latencies in nanoseconds, in µs.
fn latency_summary(mut ns: Vec<u64>) -> (Option<f64>, Option<f64>, Option<f64>) {
    ns.sort_unstable();
    let us = |v: Option<u64>| v.map(|v| v as f64 / 1e3);
    let avg = (!ns.is_empty()).then(|| ns.iter().sum::<u64>() as f64 / ns.len() as f64 / 1e3);
    (us(percentile(&ns, 50.0)), us(percentile(&ns, 99.0)), avg)
}

/// Raise this process's open-file limit to its hard limit (1,000
/// subscribers need more than the usual 1,024 soft limit); the servers
/// the harness starts inherit it.
pub fn raise_fd_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let r = getrlimit(Resource::Nofile);
    if r.current != r.maximum {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: r.maximum,
                maximum: r.maximum,
            },
        );
    }
}

/// The client's entry point: run, print the report, exit non-zero only
/// when nothing could be measured.
pub fn main(args: &[String]) -> Result<()> {
    let a = parse_args(args)?;
    raise_fd_limit();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let report = local.block_on(&rt, async {
        if a.broadcast {
            broadcast(&a).await
        } else {
            echo(&a).await
        }
    })?;
    print!("{}", report.format());
    Ok(())
}

/// A connection after its handshake, with its read buffer.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// A message's frame from a server: opcode and payload (in `Conn::buf`).
struct Got {
    opcode: u8,
    at: (usize, usize),
}

const READ_BUF: usize = 64 * 1024;
const CONNECT_LIMIT: Duration = Duration::from_secs(10);

impl Conn {
    async fn open(addr: SocketAddr, path: &str) -> Result<Conn> {
        let go = async {
            let mut stream = TcpStream::connect(addr).await?;
            stream.set_nodelay(true)?;
            stream
                .write_all(wsproto::handshake_request(&addr.to_string(), path).as_bytes())
                .await?;
            let mut buf = vec![0u8; READ_BUF];
            let mut end = 0;
            loop {
                let n = stream.read(&mut buf[end..]).await?;
                if n == 0 {
                    bail!("the server closed the connection during the handshake");
                }
                end += n;
                if let Some(head) = wsproto::head_end(&buf[..end]) {
                    wsproto::check_response(&String::from_utf8_lossy(&buf[..head]))?;
                    return Ok(Conn {
                        stream,
                        buf,
                        start: head,
                        end,
                    });
                }
                if end > 16 * 1024 {
                    bail!("no end to the handshake's response head");
                }
            }
        };
        tokio::time::timeout(CONNECT_LIMIT, go)
            .await
            .map_err(|_| anyhow!("no handshake within {} s", CONNECT_LIMIT.as_secs()))?
            .with_context(|| format!("ws://{addr}{path}"))
    }

    /// The next data frame (answering pings on the way). A close frame,
    /// the end of the stream or a fragmented message is an error.
    async fn next(&mut self) -> Result<Got> {
        loop {
            if let Some(f) = wsproto::parse_frame(&self.buf[self.start..self.end])? {
                let at = (self.start + f.payload.0, self.start + f.payload.1);
                self.start += f.len;
                match f.opcode {
                    OP_PING => {
                        let p = self.buf[at.0..at.1].to_vec();
                        let pong = wsproto::client_frame(OP_PONG, &p, [0; 4]);
                        self.stream.write_all(&pong).await?;
                        continue;
                    }
                    OP_PONG => continue,
                    OP_CLOSE => bail!(
                        "the server closed the connection (code {})",
                        wsproto::close_code(&self.buf[at.0..at.1])
                    ),
                    _ if !f.fin => bail!("a fragmented message"),
                    op => return Ok(Got { opcode: op, at }),
                }
            }
            if self.start == self.end {
                self.start = 0;
                self.end = 0;
            } else if self.end == self.buf.len() {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
                if self.end == self.buf.len() {
                    self.buf.resize(self.buf.len() * 2, 0);
                }
            }
            let n = self.stream.read(&mut self.buf[self.end..]).await?;
            if n == 0 {
                bail!("the server closed the connection");
            }
            self.end += n;
        }
    }
}

/// A message of `size` bytes: `prefix`, then `x`s.
fn padded(prefix: &str, size: usize) -> Vec<u8> {
    let mut v = prefix.as_bytes().to_vec();
    v.resize(size.max(v.len()), b'x');
    v
}

/// The mask of the client's frames. Any value is valid for the server;
/// a fixed one keeps the client's work per message to the XOR.
const MASK: [u8; 4] = [0x37, 0xFA, 0x21, 0x3D];

/// Errors of the run: how many connections failed, and the first reason.
#[derive(Default)]
struct Errors {
    count: u64,
    first: Option<String>,
}

impl Errors {
    fn add(&mut self, e: &anyhow::Error) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(format!("{e:#}"));
        }
    }
}

/// The measured window: its start, and the CPU readings at its start.
struct Window {
    start: Instant,
    deadline: Instant,
    server0: Option<u64>,
    me0: u64,
}

fn cpu_self() -> u64 {
    crate::procstat::read_pid("self").map_or(0, |s| s.own())
}

impl Window {
    fn open(a: &ClientArgs) -> Window {
        let server0 = a.server_pid.map(crate::procstat::tree_ticks);
        let me0 = cpu_self();
        let start = Instant::now();
        Window {
            start,
            deadline: start + Duration::from_secs_f64(a.seconds),
            server0,
            me0,
        }
    }

    /// At the deadline: the server's ticks and this process's % of a core.
    fn close(&self, a: &ClientArgs) -> (Option<u64>, f64, f64) {
        let server = a
            .server_pid
            .map(crate::procstat::tree_ticks)
            .zip(self.server0)
            .map(|(b, a)| b.saturating_sub(a));
        let me = cpu_self().saturating_sub(self.me0);
        let wall = self.start.elapsed().as_secs_f64();
        let tck = crate::procstat::clk_tck().unwrap_or(100) as f64;
        (server, me as f64 * 100.0 / tck / wall, wall)
    }
}

/// How long the tasks get to finish after the deadline (one round trip or
/// one broadcast each) before they are abandoned and counted as errors.
const GRACE: Duration = Duration::from_secs(3);

pub async fn echo(a: &ClientArgs) -> Result<WsReport> {
    let mut conns = Vec::new();
    for _ in 0..a.connections {
        conns.push(Conn::open(a.addr, &a.path).await?);
    }
    let window = Rc::new(Window::open(a));
    let mut tasks = Vec::new();
    for (i, mut c) in conns.into_iter().enumerate() {
        let msg = padded(&format!("echo {i:06} "), a.size);
        let frame = wsproto::client_frame(OP_TEXT, &msg, MASK);
        let w = window.clone();
        tasks.push(tokio::task::spawn_local(async move {
            let mut lat: Vec<u64> = Vec::with_capacity(1 << 16);
            let run = async {
                loop {
                    let t0 = Instant::now();
                    if t0 >= w.deadline {
                        return Ok(());
                    }
                    c.stream.write_all(&frame).await?;
                    let got = c.next().await?;
                    let t1 = Instant::now();
                    if got.opcode != OP_TEXT || c.buf[got.at.0..got.at.1] != msg[..] {
                        bail!(
                            "the echo differs: opcode {}, {:?}",
                            got.opcode,
                            String::from_utf8_lossy(&c.buf[got.at.0..got.at.1])
                        );
                    }
                    if t1 <= w.deadline {
                        lat.push((t1 - t0).as_nanos() as u64);
                    }
                }
            };
            let r: Result<()> = run.await;
            (lat, r)
        }));
    }
    tokio::time::sleep_until(window.deadline.into()).await;
    let (server_ticks, cpu, wall) = window.close(a);
    let mut all = Vec::new();
    let mut errors = Errors::default();
    let give_up = tokio::time::Instant::now() + GRACE;
    for t in tasks {
        match tokio::time::timeout_at(give_up, t).await {
            Ok(Ok((lat, r))) => {
                all.extend(lat);
                if let Err(e) = r {
                    errors.add(&e);
                }
            }
            Ok(Err(e)) => errors.add(&anyhow!("a connection's task failed: {e}")),
            Err(_) => errors.add(&anyhow!(
                "a connection got no echo within {} s of the end",
                GRACE.as_secs()
            )),
        }
    }
    let messages = all.len() as u64;
    let (p50, p99, avg) = latency_summary(all);
    Ok(WsReport {
        mode: "echo".into(),
        connections: a.connections,
        messages,
        broadcasts: 0,
        duration_s: wall.min(a.seconds),
        p50_us: p50,
        p99_us: p99,
        avg_us: avg,
        server_ticks,
        client_cpu_pct: cpu,
        errors: errors.count,
        first_error: errors.first,
    })
}

/// The broadcast run's shared state (one thread: `RefCell`).
struct Room {
    subscribers: u32,
    window: u64,
    /// Per slot (broadcast number % window): deliveries so far, send time.
    counts: Vec<u32>,
    sent_at: Vec<Instant>,
    sent: u64,
    completed: u64,
    /// Subscribers that have received anything (the start-up sync).
    synced: Vec<bool>,
    /// Set when the window opens: deliveries before it are not counted.
    deadline: Option<Instant>,
    delivered: u64,
    latencies: Vec<u64>,
    errors: Errors,
}

/// The number a broadcast carries: `b <20 digits>`.
fn broadcast_number(payload: &[u8]) -> Option<u64> {
    let digits = payload.strip_prefix(b"b ")?.get(..20)?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

impl Room {
    /// A subscriber received `payload`; true when it completed broadcasts.
    fn delivered(&mut self, sub: usize, payload: &[u8], now: Instant) -> Result<bool> {
        self.synced[sub] = true;
        if payload.starts_with(b"sync") {
            return Ok(false);
        }
        let n = broadcast_number(payload)
            .ok_or_else(|| anyhow!("not a broadcast: {:?}", String::from_utf8_lossy(payload)))?;
        if n < self.completed || n >= self.sent {
            bail!(
                "broadcast {n} arrived outside the window {}..{}",
                self.completed,
                self.sent
            );
        }
        let in_window = self.deadline.is_some_and(|d| now <= d);
        if in_window {
            self.delivered += 1;
        }
        let slot = (n % self.window) as usize;
        self.counts[slot] += 1;
        let mut done = false;
        loop {
            let slot = (self.completed % self.window) as usize;
            if self.completed >= self.sent || self.counts[slot] < self.subscribers {
                break;
            }
            self.counts[slot] = 0;
            if in_window {
                self.latencies
                    .push((now - self.sent_at[slot]).as_nanos() as u64);
            }
            self.completed += 1;
            done = true;
        }
        Ok(done)
    }
}

pub async fn broadcast(a: &ClientArgs) -> Result<WsReport> {
    let mut subs = Vec::new();
    for _ in 0..a.connections {
        subs.push(Conn::open(a.addr, &a.path).await?);
    }
    let publisher = Conn::open(a.addr, &a.path).await?;
    let room = Rc::new(RefCell::new(Room {
        subscribers: a.connections,
        window: a.window as u64,
        counts: vec![0; a.window as usize],
        sent_at: vec![Instant::now(); a.window as usize],
        sent: 0,
        completed: 0,
        synced: vec![false; a.connections as usize],
        deadline: None,
        delivered: 0,
        latencies: Vec::with_capacity(1 << 16),
        errors: Errors::default(),
    }));
    let progress = Rc::new(Notify::new());
    let mut tasks = Vec::new();
    for (i, mut c) in subs.into_iter().enumerate() {
        let (room, progress) = (room.clone(), progress.clone());
        tasks.push(tokio::task::spawn_local(async move {
            let r: Result<()> = async {
                loop {
                    let got = c.next().await?;
                    let now = Instant::now();
                    let done = room
                        .borrow_mut()
                        .delivered(i, &c.buf[got.at.0..got.at.1], now)?;
                    if done {
                        progress.notify_one();
                    }
                }
            }
            .await;
            if let Err(e) = r {
                room.borrow_mut().errors.add(&e);
            }
        }));
    }
    // The publisher's own copies (it is subscribed too): read, not counted.
    let Conn {
        stream,
        buf,
        start,
        end,
    } = publisher;
    let (read_half, mut write) = stream.into_split();
    let drain_room = room.clone();
    tasks.push(tokio::task::spawn_local(async move {
        let mut r = read_half;
        let (mut buf, mut start, mut end) = (buf, start, end);
        let e: anyhow::Error = loop {
            match wsproto::parse_frame(&buf[start..end]) {
                Ok(Some(f)) if f.opcode == OP_CLOSE => {
                    break anyhow!("the server closed the publisher's connection")
                }
                Ok(Some(f)) => {
                    start += f.len;
                    continue;
                }
                Ok(None) => {}
                Err(e) => break e,
            }
            buf.copy_within(start..end, 0);
            end -= start;
            start = 0;
            if end == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
            match r.read(&mut buf[end..]).await {
                Ok(0) => break anyhow!("the server closed the publisher's connection"),
                Ok(n) => end += n,
                Err(e) => break e.into(),
            }
        };
        drain_room.borrow_mut().errors.add(&e);
    }));
    // Start-up: publish `sync` until every subscriber has received one
    // (a server may subscribe a connection after its handshake's answer).
    let sync = wsproto::client_frame(OP_TEXT, &padded("sync", a.size), MASK);
    let synced_by = Instant::now() + CONNECT_LIMIT;
    loop {
        write.write_all(&sync).await?;
        tokio::time::sleep(Duration::from_millis(20)).await;
        let r = room.borrow();
        if r.synced.iter().all(|&s| s) {
            break;
        }
        if Instant::now() > synced_by || r.errors.count > 0 {
            let missing = r.synced.iter().filter(|&&s| !s).count();
            bail!(
                "{missing} of {} subscribers received nothing within {} s{}",
                a.connections,
                CONNECT_LIMIT.as_secs(),
                r.errors
                    .first
                    .as_ref()
                    .map_or(String::new(), |e| format!(" ({e})"))
            );
        }
    }
    // Let the last syncs arrive, then open the window.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let window = Window::open(a);
    room.borrow_mut().deadline = Some(window.deadline);
    let deadline = window.deadline;
    let publish_room = room.clone();
    let publish_progress = progress.clone();
    let size = a.size;
    let publish = tokio::task::spawn_local(async move {
        let r: Result<()> = async {
            let mut frames = Vec::new();
            loop {
                let now = Instant::now();
                if now >= deadline {
                    return Ok(());
                }
                frames.clear();
                {
                    let mut r = publish_room.borrow_mut();
                    while r.sent - r.completed < r.window {
                        let n = r.sent;
                        let slot = (n % r.window) as usize;
                        r.sent_at[slot] = now;
                        r.sent += 1;
                        let msg = padded(&format!("b {n:020} "), size);
                        frames.extend(wsproto::client_frame(OP_TEXT, &msg, MASK));
                    }
                }
                if !frames.is_empty() {
                    write.write_all(&frames).await?;
                }
                publish_progress.notified().await;
            }
        }
        .await;
        if let Err(e) = r {
            publish_room.borrow_mut().errors.add(&e);
        }
        write
    });
    tokio::time::sleep_until(deadline.into()).await;
    let (server_ticks, cpu, wall) = window.close(a);
    // Wake the publisher so that it sees the deadline and stops.
    progress.notify_one();
    let _write = tokio::time::timeout(GRACE, publish).await;
    for t in &tasks {
        t.abort();
    }
    let mut r = room.borrow_mut();
    let latencies = std::mem::take(&mut r.latencies);
    let broadcasts = latencies.len() as u64;
    let (p50, p99, avg) = latency_summary(latencies);
    Ok(WsReport {
        mode: "broadcast".into(),
        connections: a.connections,
        messages: r.delivered,
        broadcasts,
        duration_s: wall.min(a.seconds),
        p50_us: p50,
        p99_us: p99,
        avg_us: avg,
        server_ticks,
        client_cpu_pct: cpu,
        errors: r.errors.count,
        first_error: r.errors.first.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn client_arguments() {
        let a = parse_args(&args(
            "echo --url ws://127.0.0.1:9000/echo --connections 50 --seconds 2.5 --server-pid 42",
        ))
        .unwrap();
        assert!(!a.broadcast);
        assert_eq!(a.addr, "127.0.0.1:9000".parse().unwrap());
        assert_eq!(a.path, "/echo");
        assert_eq!(
            (a.connections, a.seconds, a.server_pid),
            (50, 2.5, Some(42))
        );
        assert_eq!((a.window, a.size), (WINDOW, MESSAGE_BYTES));
        let b = parse_args(&args(
            "broadcast --url ws://127.0.0.1:1/broadcast --window 4",
        ))
        .unwrap();
        assert!(b.broadcast);
        assert_eq!(
            (b.connections, b.window, b.server_pid),
            (SUBSCRIBERS, 4, None)
        );
        assert!(parse_args(&args("chat --url ws://127.0.0.1:1/")).is_err());
        assert!(parse_args(&args("echo")).is_err());
        assert!(parse_args(&args("echo --url http://127.0.0.1:1/echo")).is_err());
        assert!(parse_args(&args("echo --url ws://localhost:1/echo")).is_err());
        assert!(parse_args(&args("echo --url ws://127.0.0.1:1/ --size 8")).is_err());
        assert!(parse_args(&args("echo --url ws://127.0.0.1:1/ --connections 0")).is_err());
        assert!(parse_args(&args("echo --url ws://127.0.0.1:1/ --bogus 1")).is_err());
        assert_eq!(
            split_url("ws://127.0.0.1:5").unwrap(),
            ("127.0.0.1:5".parse().unwrap(), "/".to_string())
        );
    }

    #[test]
    fn reports_round_trip() {
        let r = WsReport {
            mode: "broadcast".into(),
            connections: 1000,
            messages: 4_000_000,
            broadcasts: 4000,
            duration_s: 2.0,
            p50_us: Some(812.5),
            p99_us: Some(2_000.25),
            avg_us: None,
            server_ticks: Some(195),
            client_cpu_pct: 71.5,
            errors: 2,
            first_error: Some("the server closed the connection\n(code 1008)".into()),
        };
        let text = r.format();
        assert!(text.contains("avg_us -\n"), "{text}");
        let back = WsReport::parse(&text).unwrap();
        assert_eq!(
            back.first_error.as_deref(),
            Some("the server closed the connection (code 1008)")
        );
        assert_eq!(
            back,
            WsReport {
                first_error: back.first_error.clone(),
                ..r
            }
        );
        assert_eq!(back.rate(), 2_000_000.0);
        assert!(WsReport::parse("").is_err());
        assert!(WsReport::parse("mode echo\nmessages x\nduration_s 1\n").is_err());
        let bare = WsReport::parse("noise line\nmessages 10\nduration_s 0\n").unwrap();
        assert_eq!(
            (bare.messages, bare.rate(), bare.server_ticks),
            (10, 0.0, None)
        );
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&v, 0.0), Some(1));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[], 50.0), None);
        let (p50, p99, avg) = latency_summary(vec![3000, 1000, 2000, 4000]);
        assert_eq!((p50, p99, avg), (Some(2.0), Some(4.0), Some(2.5)));
        assert_eq!(latency_summary(Vec::new()), (None, None, None));
    }

    fn room(subscribers: u32, window: u64) -> Room {
        Room {
            subscribers,
            window,
            counts: vec![0; window as usize],
            sent_at: vec![Instant::now(); window as usize],
            sent: 0,
            completed: 0,
            synced: vec![false; subscribers as usize],
            deadline: Some(Instant::now() + Duration::from_secs(60)),
            delivered: 0,
            latencies: Vec::new(),
            errors: Errors::default(),
        }
    }

    #[test]
    fn broadcasts_complete_in_order() {
        let mut r = room(2, 2);
        r.sent = 2;
        let msg = |n: u64| padded(&format!("b {n:020} "), 32);
        let now = Instant::now();
        assert!(!r.delivered(0, &padded("sync", 32), now).unwrap());
        assert!(r.synced[0] && !r.synced[1]);
        assert_eq!(r.delivered, 0);
        assert!(!r.delivered(0, &msg(0), now).unwrap());
        assert!(!r.delivered(0, &msg(1), now).unwrap());
        // The last subscriber's copy of 0 completes it; 1 waits for it too.
        assert!(r.delivered(1, &msg(0), now).unwrap());
        assert_eq!(r.completed, 1);
        assert!(r.delivered(1, &msg(1), now).unwrap());
        assert_eq!((r.completed, r.delivered, r.latencies.len()), (2, 4, 2));
        // The slots were reset for the next turn of the window.
        assert_eq!(r.counts, [0, 0]);
        // Outside the window, or not a broadcast at all.
        assert!(r.delivered(0, &msg(1), now).is_err());
        assert!(r.delivered(0, &msg(2), now).is_err());
        assert!(r.delivered(0, b"hello", now).is_err());
        assert_eq!(broadcast_number(&msg(12345)), Some(12345));
        assert_eq!(broadcast_number(b"b 12"), None);
    }

    #[test]
    fn deliveries_after_the_deadline_are_not_counted() {
        let mut r = room(1, 4);
        r.sent = 1;
        r.deadline = Some(Instant::now() - Duration::from_millis(1));
        assert!(r
            .delivered(0, &padded(&format!("b {:020} ", 0), 32), Instant::now())
            .unwrap());
        assert_eq!((r.completed, r.delivered, r.latencies.len()), (1, 0, 0));
    }
}
