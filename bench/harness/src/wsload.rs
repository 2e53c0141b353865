//! The harness's side of the `ws` table: running the load client
//! (wsclient.rs, this same binary with `--ws-client`) pinned to the load
//! core like wrk, turning its report into the numbers wrk gives, and
//! checking a server's `/echo` and `/broadcast` before they are measured
//! (with tungstenite, a client independent of the load client's framing).

use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use tokio_tungstenite::tungstenite::{self, Message};

use crate::workloads::Workload;
use crate::wrk::{Load, SocketErrors, WrkResult};
use crate::wsclient::{WsReport, SUBSCRIBERS};

/// What a `ws` cell runs: the workload's mode and the server whose CPU the
/// client reads over its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WsTarget {
    pub broadcast: bool,
    pub server_pid: u32,
}

/// Whether a `ws` workload is the broadcast one (else echo).
pub fn is_broadcast(w: &Workload) -> bool {
    w.path == "/broadcast"
}

/// Subscribers of the broadcast workload (its measurement's connections).
pub const BROADCAST_CONNECTIONS: u32 = SUBSCRIBERS;

/// `taskset -c CORE <this binary> --ws-client MODE --url ... ...`.
pub fn args(load: &Load, target: WsTarget, exe: &str) -> Vec<String> {
    vec![
        "-c".into(),
        load.core.to_string(),
        exe.into(),
        "--ws-client".into(),
        if target.broadcast {
            "broadcast"
        } else {
            "echo"
        }
        .into(),
        "--url".into(),
        load.url.clone(),
        "--connections".into(),
        load.connections.to_string(),
        "--seconds".into(),
        load.seconds.to_string(),
        "--server-pid".into(),
        target.server_pid.to_string(),
    ]
}

/// The client's report as wrk's numbers: messages as requests (echo round
/// trips, or deliveries to subscribers), p50/p99 in ms, failed connections
/// as read errors.
pub fn to_wrk(r: &WsReport) -> WrkResult {
    let mut percentiles = Vec::new();
    if let Some(p) = r.p50_us {
        percentiles.push((50.0, p / 1e3));
    }
    if let Some(p) = r.p99_us {
        percentiles.push((99.0, p / 1e3));
    }
    WrkResult {
        requests: r.messages,
        duration_s: r.duration_s,
        req_per_sec: r.rate(),
        latency_avg_ms: r.avg_us.map(|v| v / 1e3),
        percentiles,
        non_2xx: 0,
        socket_errors: SocketErrors {
            read: r.errors,
            ..SocketErrors::default()
        },
    }
}

/// Run the client to completion (killed if it overruns by 30 s: opening a
/// thousand connections, and the grace after the window); its numbers and
/// its raw report.
pub fn run(load: &Load, target: WsTarget) -> Result<(WrkResult, String)> {
    let exe = std::env::current_exe().context("cannot find cove-bench's own path")?;
    let mut cmd = Command::new("taskset");
    cmd.args(args(load, target, &exe.to_string_lossy()));
    let (out, err) = crate::wrk::run_tool(cmd, "the ws client", load.seconds + 30)?;
    let report = WsReport::parse(&out).with_context(|| format!("{}{}", out.trim(), err.trim()))?;
    Ok((to_wrk(&report), out))
}

/// How long a check waits for each message.
const CHECK_WAIT: Duration = Duration::from_secs(5);

type Socket = tungstenite::WebSocket<TcpStream>;

fn open(addr: &str, path: &str) -> Result<Socket> {
    let stream = TcpStream::connect(addr).with_context(|| format!("cannot connect to {addr}"))?;
    stream.set_read_timeout(Some(CHECK_WAIT))?;
    let (ws, _) = tungstenite::client::client(format!("ws://{addr}{path}"), stream)
        .map_err(|e| anyhow!("the WebSocket handshake on {path} failed: {e}"))?;
    Ok(ws)
}

/// The next text message (skipping pings), or an error after CHECK_WAIT.
fn read_text(ws: &mut Socket, what: &str) -> Result<String> {
    let deadline = Instant::now() + CHECK_WAIT;
    loop {
        match ws.read() {
            Ok(Message::Text(t)) => return Ok(t.to_string()),
            Ok(Message::Ping(_) | Message::Pong(_)) if Instant::now() < deadline => continue,
            Ok(other) => bail!("{what}: expected a text message, got {other:?}"),
            Err(e) => bail!("{what}: {e}"),
        }
    }
}

/// `/echo` answers a text message with the same text (and a binary one
/// with the same bytes); `/broadcast` delivers a message to every
/// subscriber, the sender included.
pub fn check(addr: &str, w: &Workload) -> Result<()> {
    if !is_broadcast(w) {
        let mut ws = open(addr, w.path)?;
        for text in ["hello, echo", "ünïcode ✓"] {
            ws.send(Message::text(text))?;
            let got = read_text(&mut ws, "/echo")?;
            if got != text {
                bail!("/echo answered {got:?} to {text:?}");
            }
        }
        ws.send(Message::binary(vec![0u8, 159, 255]))?;
        match ws.read()? {
            Message::Binary(b) if b[..] == [0u8, 159, 255] => {}
            other => bail!("/echo answered {other:?} to a binary message"),
        }
        let _ = ws.close(None);
        return Ok(());
    }
    let mut subs = [open(addr, w.path)?, open(addr, w.path)?];
    let mut publisher = open(addr, w.path)?;
    // A server may subscribe a connection just after answering its
    // handshake: publish until the first message arrives everywhere.
    let deadline = Instant::now() + CHECK_WAIT;
    let text = "hello, room";
    let mut n = 0;
    for s in subs.iter_mut().chain(std::iter::once(&mut publisher)) {
        s.get_mut()
            .set_read_timeout(Some(Duration::from_millis(200)))?;
    }
    'sync: loop {
        n += 1;
        publisher.send(Message::text(format!("{text} {n}")))?;
        for s in subs.iter_mut().chain(std::iter::once(&mut publisher)) {
            match s.read() {
                Ok(Message::Text(t)) if t.starts_with(text) => {}
                Ok(other) => bail!("/broadcast delivered {other:?}"),
                Err(_) if Instant::now() < deadline => continue 'sync,
                Err(e) => bail!("/broadcast: a subscriber got nothing within {CHECK_WAIT:?}: {e}"),
            }
        }
        break;
    }
    for s in subs.iter_mut().chain(std::iter::once(&mut publisher)) {
        s.get_mut().set_read_timeout(Some(CHECK_WAIT))?;
        let _ = s.close(None);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_command() {
        let load = Load {
            url: "ws://127.0.0.1:9/broadcast".into(),
            seconds: 3,
            connections: 1000,
            core: 1,
            script: None,
            http2: false,
            ws: None,
        };
        let t = WsTarget {
            broadcast: true,
            server_pid: 77,
        };
        assert_eq!(
            args(&load, t, "/x/cove-bench").join(" "),
            "-c 1 /x/cove-bench --ws-client broadcast --url ws://127.0.0.1:9/broadcast \
             --connections 1000 --seconds 3 --server-pid 77"
        );
        // What the harness passes, the client takes.
        let a = crate::wsclient::parse_args(&args(&load, t, "x")[4..]).unwrap();
        assert!(a.broadcast);
        assert_eq!(
            (a.connections, a.server_pid, a.path.as_str()),
            (1000, Some(77), "/broadcast")
        );
    }

    #[test]
    fn reports_become_wrk_numbers() {
        let r = WsReport {
            mode: "echo".into(),
            connections: 50,
            messages: 300_000,
            duration_s: 3.0,
            p50_us: Some(250.0),
            p99_us: Some(1_200.0),
            avg_us: Some(300.0),
            server_ticks: Some(290),
            client_cpu_pct: 40.0,
            errors: 1,
            ..WsReport::default()
        };
        let w = to_wrk(&r);
        assert_eq!(w.requests, 300_000);
        assert_eq!(w.req_per_sec, 100_000.0);
        assert_eq!(w.percentile(50.0), Some(0.25));
        assert_eq!(w.percentile(99.0), Some(1.2));
        assert_eq!(w.latency_avg_ms, Some(0.3));
        assert_eq!(w.socket_errors.total(), 1);
        let none = to_wrk(&WsReport::default());
        assert!(none.percentiles.is_empty());
        assert_eq!(none.req_per_sec, 0.0);
    }

    /// The check and the load client against a tiny echo + broadcast
    /// server made of tungstenite (one thread per connection).
    #[test]
    // tungstenite's handshake callback returns its large error response.
    #[allow(clippy::result_large_err)]
    fn check_and_client_against_a_toy_server() {
        use std::sync::{Arc, Mutex};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let room: Arc<Mutex<Vec<Socket>>> = Arc::default();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let room = room.clone();
                std::thread::spawn(move || {
                    let mut path = String::new();
                    let cb = |req: &tungstenite::handshake::server::Request, res| {
                        path = req.uri().path().to_string();
                        Ok(res)
                    };
                    let Ok(mut ws) = tungstenite::accept_hdr(stream.try_clone().unwrap(), cb)
                    else {
                        return;
                    };
                    if path == "/broadcast" {
                        let writer = tungstenite::WebSocket::from_raw_socket(
                            stream,
                            tungstenite::protocol::Role::Server,
                            None,
                        );
                        room.lock().unwrap().push(writer);
                    }
                    while let Ok(m) = ws.read() {
                        if !(m.is_text() || m.is_binary()) {
                            continue;
                        }
                        if path == "/echo" {
                            if ws.send(m).is_err() {
                                return;
                            }
                        } else {
                            for s in room.lock().unwrap().iter_mut() {
                                let _ = s.send(m.clone());
                            }
                        }
                    }
                });
            }
        });
        let echo = crate::workloads::workload_in(crate::workloads::Group::Ws, "echo").unwrap();
        let bcast =
            crate::workloads::workload_in(crate::workloads::Group::Ws, "broadcast").unwrap();
        check(&addr, echo).unwrap();
        check(&addr, bcast).unwrap();
        let run = |mode: &str, conns: u32| {
            let a = crate::wsclient::parse_args(
                &format!(
                    "{mode} --url ws://{addr}/{mode} --connections {conns} --seconds 0.5 \
                     --server-pid {}",
                    std::process::id()
                )
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>(),
            )
            .unwrap();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let local = tokio::task::LocalSet::new();
            local
                .block_on(&rt, async {
                    if a.broadcast {
                        crate::wsclient::broadcast(&a).await
                    } else {
                        crate::wsclient::echo(&a).await
                    }
                })
                .unwrap()
        };
        let e = run("echo", 4);
        assert!(e.messages > 10, "{e:?}");
        assert_eq!(e.errors, 0, "{e:?}");
        assert!(e.p50_us.unwrap() <= e.p99_us.unwrap());
        assert!(e.server_ticks.is_some());
        let b = run("broadcast", 5);
        assert_eq!(b.errors, 0, "{b:?}");
        assert!(b.broadcasts > 10, "{b:?}");
        // Every counted broadcast reached the 5 subscribers; deliveries of
        // broadcasts still in flight at the deadline are counted too.
        assert!(b.messages >= 5 * b.broadcasts, "{b:?}");
        assert!(
            b.messages <= 5 * (b.broadcasts + crate::wsclient::WINDOW as u64),
            "{b:?}"
        );
    }
}
