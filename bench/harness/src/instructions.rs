//! `bench/run --instructions`: user-space instructions per request for
//! Cove's own routes, counted by valgrind's callgrind. Wall-clock and CPU
//! time are noisy on a shared machine; instruction counts barely move, so a
//! regression of a few percent shows.
//!
//! Per route, the server runs under callgrind twice, each time a fresh
//! process: once answering N requests, once 10·N. Requests go one after
//! another over one keep-alive connection (the small client below), then
//! SIGTERM stops the server gracefully (Cove drains and exits 0) and
//! callgrind writes its total `Ir`. Every run of an app starts from a copy
//! of a database that app made once, outside valgrind: the hello app seeds
//! 1,000 events on a new database, indexed by the time of insert, which
//! cost a different number of instructions from run to run (up to ±120 a
//! request in the ratio below). Every run of the hello app then sends
//! 25 × `GET /` (its INSERT route) so that `GET /visits` has its 20 rows to
//! return. Start-up, seeding and shutdown cost the same in both runs, so
//! (I(10N) − I(N)) / 9N is the cost of one request. `cove
//! baseline` (no script) is measured the same way and comes first, as the
//! denominator of the hello app's ratios; the template app's routes are
//! compared with its own `/health` (Hull's template table).
//!
//! The counts cover every thread of the server process, user space only
//! (no kernel time), with a 1-worker server and one client: no contention.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

/// Start-up, shutdown and single requests are slow under valgrind.
const TIMEOUT: Duration = Duration::from_secs(60);

/// `(path, count)`: the GET requests every run of the hello app starts with.
pub const SEED: (&str, u64) = ("/", 25);

/// One request to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// Short name, as in the main table (`health`, `select20`, …).
    pub name: String,
    pub method: String,
    pub path: String,
    /// Sent as `application/json` with a Content-Length.
    pub body: Option<String>,
}

impl Route {
    /// `GET /health`.
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// What `cove baseline` is asked (it answers any path with a fixed JSON body).
pub fn baseline_route() -> Route {
    Route {
        name: "baseline".to_string(),
        method: "GET".to_string(),
        path: "/".to_string(),
        body: None,
    }
}

/// One route of one server to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// `cove-baseline`, `cove-lua`, `cove-js-tpl`: the harness's server keys.
    pub server: String,
    /// The app to serve; `None`: `cove baseline`.
    pub app: Option<PathBuf>,
    /// GET requests sent before the measured ones (`(path, count)`).
    pub seed: Option<(&'static str, u64)>,
    pub route: Route,
}

impl Job {
    /// `cove baseline`, asked `GET /`.
    pub fn baseline() -> Job {
        Job {
            server: "cove-baseline".to_string(),
            app: None,
            seed: None,
            route: baseline_route(),
        }
    }
}

/// The result for one route.
#[derive(Debug, Clone, PartialEq)]
pub struct Count {
    /// The server key of the job.
    pub server: String,
    pub route: String,
    /// `GET /health`.
    pub label: String,
    /// (large − small) / 9N.
    pub per_request: f64,
    /// Total `Ir` of the run with N requests.
    pub small: u64,
    /// Total `Ir` of the run with 10·N requests.
    pub large: u64,
    pub n: u64,
}

/// Measure every job, N and 10·N requests each, in order.
/// `progress` gets a line before every run.
pub fn measure(cove: &Path, jobs: &[Job], n: u64, progress: &dyn Fn(&str)) -> Result<Vec<Count>> {
    let Some(large_n) = n.checked_mul(10).filter(|_| n > 0) else {
        bail!("the number of requests must be between 1 and u64::MAX / 10");
    };
    check_valgrind()?;
    if !cove.is_file() {
        bail!(
            "{} not found; build it with `cargo build --release -p cove`",
            cove.display()
        );
    }
    // Each run's working directory is its scratch folder: a relative path
    // would not resolve there.
    let cove = &cove
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", cove.display()))?;
    let scratch = Scratch::new()?;
    // The database each app made, by app.
    let mut made: HashMap<PathBuf, PathBuf> = HashMap::new();
    let mut counts = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let route = &job.route;
        let app = match &job.app {
            Some(app) => Some(
                app.canonicalize()
                    .with_context(|| format!("app {} not found", app.display()))?,
            ),
            None => None,
        };
        let mut totals = [0u64; 2];
        for (k, requests) in [n, large_n].into_iter().enumerate() {
            progress(&format!(
                "instructions: {} {} ({}), {requests} requests under callgrind ({}/{})",
                job.server,
                route.name,
                route.label(),
                2 * i + k + 1,
                2 * jobs.len()
            ));
            // One fresh directory per run: its callgrind file and database.
            let dir = scratch.0.join(format!("{i}-{k}"));
            std::fs::create_dir_all(&dir)?;
            let mut args: Vec<OsString> = match &app {
                None => vec!["baseline".into()],
                Some(app) => {
                    let made_db = match made.get(app) {
                        Some(db) => db.clone(),
                        None => {
                            let made_dir = scratch.0.join(format!("made-{}", made.len()));
                            progress(&format!("instructions: {} makes its database", job.server));
                            let db = made_database(cove, app, &made_dir).with_context(|| {
                                format!("making the database of {}", app.display())
                            })?;
                            made.insert(app.clone(), db.clone());
                            db
                        }
                    };
                    let db = dir.join("bench.db");
                    std::fs::copy(&made_db, &db)
                        .with_context(|| format!("cannot copy {}", made_db.display()))?;
                    vec!["-d".into(), db.into()]
                }
            };
            args.extend(["-p", "0", "--workers", "1"].map(OsString::from));
            if let Some(app) = &app {
                args.push(app.clone().into());
            }
            totals[k] = run_once(cove, &args, &dir, job.seed, route, requests)
                .with_context(|| format!("{} with {requests} requests", route.label()))?;
        }
        let [small, large] = totals;
        counts.push(Count {
            server: job.server.clone(),
            route: route.name.clone(),
            label: route.label(),
            per_request: (large as f64 - small as f64) / (9 * n) as f64,
            small,
            large,
            n,
        });
    }
    Ok(counts)
}

fn check_valgrind() -> Result<()> {
    match Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => {
            bail!("`valgrind --version` failed ({s}); reinstall it with `apt-get install valgrind`")
        }
        Err(_) => bail!(
            "valgrind is not installed: --instructions needs it (`sudo apt-get install valgrind`)"
        ),
    }
}

/// Start `app` natively on a new database in `dir` and stop it: its
/// migrations and start-up seeding done once. Returns the database (its
/// WAL is checkpointed into it on the way out).
fn made_database(cove: &Path, app: &Path, dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let db = dir.join("bench.db");
    let mut args: Vec<OsString> = vec!["-d".into(), db.clone().into()];
    args.extend(["-p", "0", "--workers", "1"].map(OsString::from));
    args.push(app.into());
    Traced::start(cove, &args, dir, false)?.finish()?;
    Ok(db)
}

/// One server process under callgrind: start, `seed` requests, `n`
/// requests of `route`, SIGTERM; returns the total Ir.
fn run_once(
    cove: &Path,
    args: &[OsString],
    dir: &Path,
    seed: Option<(&str, u64)>,
    route: &Route,
    n: u64,
) -> Result<u64> {
    let mut server = Traced::start(cove, args, dir, true)?;
    let mut conn = Conn::open(&server.addr)?;
    if let Some((path, count)) = seed {
        for _ in 0..count {
            conn.request("GET", path, None)
                .with_context(|| format!("seeding with GET {path}"))?;
        }
    }
    for _ in 0..n {
        conn.request(&route.method, &route.path, route.body.as_deref())?;
    }
    drop(conn);
    server.finish()?;
    let mut total = 0;
    let mut files = 0;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path
            .file_name()
            .is_some_and(|f| f.to_string_lossy().starts_with("cg."))
        {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            total += callgrind_total(&text).with_context(|| format!("{}", path.display()))?;
            files += 1;
        }
    }
    if files == 0 {
        bail!("callgrind wrote no output file in {}", dir.display());
    }
    Ok(total)
}

/// The total `Ir` of a callgrind output file: the sum of its `totals:`
/// lines (one per part), or of its `summary:` lines if there is no
/// `totals:`. The `events:` line says which column is `Ir`.
pub fn callgrind_total(text: &str) -> Result<u64> {
    let mut column = 0;
    let (mut totals, mut summaries) = (None::<u64>, None::<u64>);
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let slot = match key {
            "events" => {
                column = rest
                    .split_whitespace()
                    .position(|e| e == "Ir")
                    .ok_or_else(|| anyhow!("callgrind output has no Ir event: {line:?}"))?;
                continue;
            }
            "totals" => &mut totals,
            "summary" => &mut summaries,
            _ => continue,
        };
        let value: u64 = rest
            .split_whitespace()
            .nth(column)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| anyhow!("bad callgrind line {line:?}"))?;
        *slot = Some(slot.unwrap_or(0) + value);
    }
    totals
        .or(summaries)
        .ok_or_else(|| anyhow!("no `totals:` or `summary:` line in the callgrind output"))
}

/// The scratch directory of one `measure`, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        let dir = std::env::temp_dir().join(format!("cove-instructions-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `cove …`, under `valgrind --tool=callgrind` or not, killed if dropped
/// before [`Traced::finish`] (an error on the way must not leave it
/// running).
struct Traced {
    child: Option<Child>,
    pid: u32,
    addr: String,
    log: PathBuf,
}

/// The address in a `listening on http://127.0.0.1:18700 (...)` log line.
fn listening_addr(line: &str) -> Option<String> {
    let rest = &line[line.find("listening on http://")? + "listening on http://".len()..];
    let addr = rest.split_whitespace().next()?.trim_end_matches('/');
    (!addr.is_empty()).then(|| addr.to_string())
}

impl Traced {
    /// Start it (under callgrind if `traced`, with its output file in
    /// `dir`) and wait for `listening on`.
    fn start(cove: &Path, args: &[OsString], dir: &Path, traced: bool) -> Result<Traced> {
        let mut cmd = if traced {
            let mut out_file = OsString::from("--callgrind-out-file=");
            out_file.push(dir.join("cg.%p"));
            let mut cmd = Command::new("valgrind");
            cmd.arg("--tool=callgrind").arg(out_file).arg(cove);
            cmd
        } else {
            Command::new(cove)
        };
        cmd.args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = crate::servers::spawn_group(&mut cmd).context("cannot start the server")?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut server = Traced {
            pid: child.id(),
            child: Some(child),
            addr: String::new(),
            log: dir.join("server.log"),
        };
        let mut file = std::fs::File::create(&server.log)?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                let _ = writeln!(file, "{line}");
                if let Some(addr) = listening_addr(&line) {
                    let _ = tx.send(addr);
                }
            }
        });
        match rx.recv_timeout(TIMEOUT) {
            Ok(addr) => server.addr = addr,
            Err(e) => {
                let why = match e {
                    mpsc::RecvTimeoutError::Timeout => "did not report `listening on` in 60 s",
                    mpsc::RecvTimeoutError::Disconnected => "exited before listening",
                };
                bail!("the server {why}; {}", server.log_tail());
            }
        }
        Ok(server)
    }

    /// The last lines of the server's stderr without valgrind's `==pid==`
    /// chatter, for error messages.
    fn log_tail(&self) -> String {
        std::thread::sleep(Duration::from_millis(100));
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut lines: Vec<&str> = log.lines().filter(|l| !l.starts_with("==")).collect();
        if lines.is_empty() {
            lines = log.lines().collect();
        }
        let tail = lines[lines.len().saturating_sub(15)..].join("\n");
        format!("its log ends with:\n{tail}")
    }

    /// SIGTERM, then wait for a clean exit (callgrind writes its file then).
    fn finish(&mut self) -> Result<()> {
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if Instant::now() > deadline {
                bail!(
                    "the server did not exit within 60 s of SIGTERM; {}",
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        self.child = None;
        crate::servers::untrack(self.pid);
        if !status.success() {
            bail!(
                "the server exited with {status} after SIGTERM; {}",
                self.log_tail()
            );
        }
        Ok(())
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            crate::servers::untrack(self.pid);
        }
    }
}

/// What the client needs from a response head.
#[derive(Debug, Clone, PartialEq)]
struct Head {
    status: u16,
    content_length: Option<usize>,
    chunked: bool,
    /// `Connection: close`: the server will not take another request.
    close: bool,
}

/// Parse `HTTP/1.1 200 OK\r\nContent-Length: 15\r\n…` (the blank line
/// that ends a head is optional here).
fn parse_head(head: &str) -> Result<Head> {
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.split_whitespace();
    let status = match (parts.next(), parts.next()) {
        (Some(v), Some(code)) if v.starts_with("HTTP/1.") => code.parse().ok(),
        _ => None,
    }
    .ok_or_else(|| anyhow!("bad status line {status_line:?}"))?;
    let mut h = Head {
        status,
        content_length: None,
        chunked: false,
        close: false,
    };
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                h.content_length = Some(
                    value
                        .parse()
                        .map_err(|_| anyhow!("bad Content-Length {value:?}"))?,
                );
            }
            "transfer-encoding" => h.chunked = value.to_ascii_lowercase().contains("chunked"),
            "connection" => h.close = value.eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    Ok(h)
}

/// A blocking HTTP/1.1 client on one keep-alive connection.
struct Conn {
    reader: BufReader<TcpStream>,
    host: String,
    body: Vec<u8>,
}

impl Conn {
    fn open(addr: &str) -> Result<Conn> {
        let stream =
            TcpStream::connect(addr).with_context(|| format!("cannot connect to {addr}"))?;
        stream.set_read_timeout(Some(TIMEOUT))?;
        stream.set_write_timeout(Some(TIMEOUT))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            reader: BufReader::new(stream),
            host: addr.to_string(),
            body: Vec::new(),
        })
    }

    /// Send one request, read the whole response; fails unless it is a 200
    /// that leaves the connection open.
    fn request(&mut self, method: &str, path: &str, body: Option<&str>) -> Result<()> {
        let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.host);
        if let Some(b) = body {
            req.push_str("Content-Type: application/json\r\n");
            req.push_str(&format!("Content-Length: {}\r\n", b.len()));
        }
        req.push_str("\r\n");
        req.push_str(body.unwrap_or(""));
        self.reader.get_mut().write_all(req.as_bytes())?;

        let mut head = String::new();
        loop {
            let before = head.len();
            if self.reader.read_line(&mut head)? == 0 {
                bail!("{method} {path}: the server closed the connection");
            }
            if head[before..].trim_end().is_empty() && before > 0 {
                break;
            }
            if head.len() > 64 * 1024 {
                bail!("{method} {path}: response head over 64 KiB");
            }
        }
        let h = parse_head(&head).with_context(|| format!("{method} {path}"))?;
        self.body.clear();
        if h.chunked {
            self.read_chunked()?;
        } else if let Some(len) = h.content_length {
            self.body.resize(len, 0);
            self.reader.read_exact(&mut self.body)?;
        } else if !(h.status == 204 || h.status == 304 || (100..200).contains(&h.status)) {
            bail!("{method} {path}: response without Content-Length cannot be kept alive");
        }
        if h.status != 200 {
            let text = String::from_utf8_lossy(&self.body);
            bail!(
                "{method} {path}: expected 200, got {}: {}",
                h.status,
                text.chars().take(300).collect::<String>()
            );
        }
        if h.close {
            bail!("{method} {path}: the server answered `Connection: close`");
        }
        Ok(())
    }

    fn read_chunked(&mut self) -> Result<()> {
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line)?;
            let size = line.trim().split(';').next().unwrap_or("");
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| anyhow!("bad chunk size line {line:?}"))?;
            let start = self.body.len();
            self.body.resize(start + size, 0);
            self.reader.read_exact(&mut self.body[start..])?;
            let mut crlf = String::new();
            self.reader.read_line(&mut crlf)?;
            if size == 0 {
                // `crlf` was the blank line ending the (empty) trailers.
                return Ok(());
            }
        }
    }
}

fn per_request(c: &Count) -> String {
    if c.per_request >= 0.0 {
        crate::report::thousands(c.per_request)
    } else {
        format!("{:.0}", c.per_request)
    }
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}×", a / b)
    } else {
        "—".to_string()
    }
}

/// Whether a count belongs to the template table (its own section).
fn is_template(c: &Count) -> bool {
    c.server.ends_with("-tpl")
}

/// The counts' tables, with a line on method: the baseline and the hello
/// app's routes (ratios to the baseline), then the template app per runtime
/// (ratios to its own `/health`).
pub fn markdown(counts: &[Count]) -> String {
    let mut out = String::new();
    let main: Vec<&Count> = counts.iter().filter(|c| !is_template(c)).collect();
    if !main.is_empty() {
        out +=
            "| server | route | instructions/request | ratio to baseline |\n|---|---|---:|---:|\n";
        let base = main
            .iter()
            .find(|c| c.server == "cove-baseline")
            .map_or(0.0, |c| c.per_request);
        for c in &main {
            out += &format!(
                "| {} | `{}` {} | {} | {} |\n",
                c.server,
                c.label,
                c.route,
                per_request(c),
                ratio(c.per_request, base)
            );
        }
    }
    let mut servers: Vec<&str> = Vec::new();
    for c in counts.iter().filter(|c| is_template(c)) {
        if !servers.contains(&c.server.as_str()) {
            servers.push(&c.server);
        }
    }
    if !servers.is_empty() {
        let routes = crate::workloads::Table::Templates.workloads();
        if !out.is_empty() {
            out += "\n";
        }
        out += "Hull's template table (bench/apps/templates); each cell: instructions/request \
                (÷ the same runtime's `/health`).\n\n| server |";
        for w in &routes {
            out += &format!(" `{}` |", w.path);
        }
        out += " `/full` ÷ `/health` |\n|---|";
        out += &"---:|".repeat(routes.len() + 1);
        out += "\n";
        for server in servers {
            let find = |name: &str| {
                counts
                    .iter()
                    .find(|c| c.server == server && c.route == name)
            };
            let health = find("tpl-health").map_or(0.0, |c| c.per_request);
            out += &format!("| {server} |");
            for w in &routes {
                out += &match find(w.name) {
                    Some(c) if w.name == "tpl-health" => format!(" {} |", per_request(c)),
                    Some(c) => format!(" {} ({}) |", per_request(c), ratio(c.per_request, health)),
                    None => " – |".to_string(),
                };
            }
            let full = find("tpl-full").map_or("–".to_string(), |c| ratio(c.per_request, health));
            out += &format!(" **{full}** |\n");
        }
    }
    if let Some(c) = counts.first() {
        out.push_str(&format!(
            "\nInstructions: callgrind `Ir` of the whole server process (user space, all threads), \
             `--workers 1`, one keep-alive connection; per request = (I(10N) − I(N)) / 9N with \
             N = {}, so start-up and shutdown cancel out.\n",
            c.n
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `cove` binary of this workspace: `COVE_BIN`, or the debug build
    /// `cargo test --workspace` makes. `None` (the test is skipped) only
    /// outside CI.
    fn cove_binary() -> Option<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let bin = std::env::var_os("COVE_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target/debug/cove"));
        if bin.is_file() {
            return Some(bin);
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "{} not found: build it with `cargo build -p cove`",
            bin.display()
        );
        eprintln!("skipped: {} not found (cargo build -p cove)", bin.display());
        None
    }

    #[test]
    fn the_made_database_holds_the_apps_seed_with_nothing_left_in_its_wal() {
        let Some(cove) = cove_binary() else { return };
        let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("../apps/hello/app.lua");
        let dir = std::env::temp_dir().join(format!("cove-made-db-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let db = made_database(&cove, &app, &dir).unwrap();
        let bytes = std::fs::read(&db).unwrap();
        // app.lua seeds 1,000 events of kind 'seed' on a new database.
        let seeds = bytes.windows(4).filter(|w| w == b"seed").count();
        let wal = std::fs::metadata(dir.join("bench.db-wal")).map_or(0, |m| m.len());
        let _ = std::fs::remove_dir_all(&dir);
        assert!(seeds >= 1000, "{seeds} seeded rows in the copy's file");
        assert_eq!(wal, 0, "the WAL still holds pages the copy would miss");
    }

    const CALLGRIND: &str = "\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 15978
cmd:  /usr/bin/cove baseline -p 0
part: 1

desc: Trigger: Program termination

positions: line
events: Ir
summary: 126651


ob=(1) /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
fn=(248) __libc_scratch_buffer_set_array_size
30 18
+4 2

totals: 126651
";

    #[test]
    fn callgrind_total_from_totals_or_summary() {
        assert_eq!(callgrind_total(CALLGRIND).unwrap(), 126_651);
        let only_summary = CALLGRIND.replace("totals: 126651\n", "");
        assert_eq!(callgrind_total(&only_summary).unwrap(), 126_651);
        let two_parts = format!("{CALLGRIND}part: 2\nsummary: 10\ntotals: 10\n");
        assert_eq!(callgrind_total(&two_parts).unwrap(), 126_661);
        let cache = "events: Dr Ir Dw\nsummary: 5 7 9\ntotals: 5 7 9\n";
        assert_eq!(callgrind_total(cache).unwrap(), 7);
        assert!(callgrind_total("events: Dr\ntotals: 1\n").is_err());
        assert!(callgrind_total("version: 1\n").is_err());
        assert!(callgrind_total("events: Ir\ntotals: x\n").is_err());
    }

    #[test]
    fn response_heads() {
        let h = parse_head(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 15\r\n\r\n",
        )
        .unwrap();
        let want = Head {
            status: 200,
            content_length: Some(15),
            chunked: false,
            close: false,
        };
        assert_eq!(h, want);
        let h = parse_head(
            "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\nConnection: Close\r\n",
        )
        .unwrap();
        assert_eq!((h.status, h.chunked, h.close), (404, true, true));
        assert_eq!(h.content_length, None);
        assert!(parse_head("HTTP/1.1 200 OK\r\nContent-Length: ten\r\n").is_err());
        assert!(parse_head("SSH-2.0-OpenSSH\r\n").is_err());
        assert!(parse_head("").is_err());
    }

    #[test]
    fn address_from_the_startup_line() {
        let line =
            "08:57:00 INFO  [cove] listening on http://127.0.0.1:18711 (Lua runtime, 1 worker)";
        assert_eq!(listening_addr(line).as_deref(), Some("127.0.0.1:18711"));
        assert_eq!(
            listening_addr("==123== Callgrind, a call-graph generating cache profiler"),
            None
        );
    }

    #[test]
    fn markdown_table_with_ratios() {
        let count = |route: &str, label: &str, per_request: f64| Count {
            server: if route == "baseline" {
                "cove-baseline"
            } else if route.starts_with("tpl-") {
                "cove-js-tpl"
            } else {
                "cove-lua"
            }
            .to_string(),
            route: route.to_string(),
            label: label.to_string(),
            per_request,
            small: 1,
            large: 2,
            n: 2000,
        };
        let md = markdown(&[
            count("baseline", "GET /", 8_312.4),
            count("health", "GET /health", 24_936.0),
        ]);
        assert!(
            md.contains("| cove-baseline | `GET /` baseline | 8,312 | 1.00× |"),
            "{md}"
        );
        assert!(
            md.contains("| cove-lua | `GET /health` health | 24,936 | 3.00× |"),
            "{md}"
        );
        assert!(md.contains("N = 2000"));
        assert!(!md.contains("template table"));
        let md = markdown(&[
            count("baseline", "GET /", 8_000.0),
            count("tpl-health", "GET /health", 20_000.0),
            count("tpl-simple", "GET /simple", 25_000.0),
            count("tpl-full", "GET /full", 50_000.0),
        ]);
        assert!(
            md.contains("| cove-baseline | `GET /` baseline | 8,000 | 1.00× |"),
            "{md}"
        );
        assert!(!md.contains("tpl-health |"), "{md}");
        assert!(
            md.contains(
                "| cove-js-tpl | 20,000 | 25,000 (1.25×) | – | 50,000 (2.50×) | **2.50×** |"
            ),
            "{md}"
        );
    }
}
