//! The conformance suite (conformance/README.md): every case of
//! conformance/specs/*.toml against the Lua app and the JavaScript app, over
//! real TCP with a real SQLite file. All failures are collected and
//! reported together.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::util::{Response, Server};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    /// The app pair the cases run against: a directory under conformance/
    /// holding app.lua and app.js (default `app`).
    #[serde(default = "main_app")]
    app: String,
    #[serde(rename = "case")]
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default = "get")]
    method: String,
    path: String,
    /// Request headers as `[name, value]` pairs (duplicates allowed).
    #[serde(default)]
    headers: Vec<(String, String)>,
    body: Option<String>,
    body_hex: Option<String>,
    body_repeat: Option<Repeat>,
    expect: Expect,
    lua: Option<Override>,
    js: Option<Override>,
}

fn get() -> String {
    "GET".into()
}

fn main_app() -> String {
    "app".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Repeat {
    text: String,
    times: usize,
}

/// What a response must look like. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    status: Option<u16>,
    reason: Option<String>,
    /// Header values that must be present (names case-insensitive).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Every value of a repeated header, in order.
    #[serde(default)]
    header_all: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    headers_present: Vec<String>,
    #[serde(default)]
    headers_absent: Vec<String>,
    /// Exact body.
    body: Option<String>,
    /// JSON-equal body (key order and number spelling ignored).
    json: Option<String>,
    body_contains: Option<String>,
    body_len: Option<usize>,
    /// Rows of a query on the database after the request.
    db: Option<DbCheck>,
    /// Text the server's log must contain; `{ext}` is `lua` or `js`.
    log_contains: Option<String>,
}

/// A runtime's deviation from `expect`: replaces the fields it sets, and
/// must say why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Override {
    why: String,
    #[serde(flatten)]
    expect: Expect,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct DbCheck {
    sql: String,
    rows: String,
}

impl Expect {
    fn merged(&self, over: Option<&Override>) -> Expect {
        let Some(o) = over.map(|o| &o.expect) else {
            return self.clone();
        };
        let mut e = self.clone();
        macro_rules! take {
            ($($f:ident),*) => {$( if o.$f.is_some() { e.$f = o.$f.clone(); } )*};
        }
        take!(
            status,
            reason,
            body,
            json,
            body_contains,
            body_len,
            db,
            log_contains
        );
        e.headers.extend(o.headers.clone());
        e.header_all.extend(o.header_all.clone());
        e.headers_present.extend(o.headers_present.clone());
        e.headers_absent.extend(o.headers_absent.clone());
        e
    }
}

fn spec_files() -> Vec<(String, SpecFile)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join("specs"))
        .expect("conformance/specs")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read spec");
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let spec: SpecFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, spec)
        })
        .collect()
}

fn request_body(case: &Case) -> Option<Vec<u8>> {
    if let Some(b) = &case.body {
        return Some(b.clone().into_bytes());
    }
    if let Some(h) = &case.body_hex {
        let bytes = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("body_hex"))
            .collect();
        return Some(bytes);
    }
    case.body_repeat
        .as_ref()
        .map(|r| r.text.repeat(r.times).into_bytes())
}

/// Wait up to a few seconds for `needle` in the log (lines may trail the response).
fn log_has(server: &Server, needle: &str) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if server.log().contains(needle) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn db_rows(server: &Server, sql: &str) -> serde_json::Value {
    let conn = rusqlite::Connection::open(server.db_path()).expect("open the server's database");
    let mut stmt = conn.prepare(sql).expect("prepare db check");
    let names: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    let rows = stmt
        .query_map([], |row| {
            let mut obj = serde_json::Map::new();
            for (i, n) in names.iter().enumerate() {
                let v = match row.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => serde_json::Value::Null,
                    rusqlite::types::ValueRef::Integer(n) => n.into(),
                    rusqlite::types::ValueRef::Real(f) => f.into(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into(),
                    rusqlite::types::ValueRef::Blob(b) => format!("{b:02x?}").into(),
                };
                obj.insert(n.clone(), v);
            }
            Ok(serde_json::Value::Object(obj))
        })
        .expect("run db check");
    serde_json::Value::Array(rows.map(|r| r.expect("row")).collect())
}

/// Compare one response with its expectation; returns what differs.
fn check(server: &Server, ext: &str, e: &Expect, r: &Response) -> Vec<String> {
    let mut bad = Vec::new();
    if let Some(s) = e.status.filter(|s| *s != r.status) {
        bad.push(format!("status {} (want {s})", r.status));
    }
    if let Some(reason) = e.reason.as_ref().filter(|x| **x != r.reason) {
        bad.push(format!("reason {:?} (want {reason:?})", r.reason));
    }
    for (name, want) in &e.headers {
        if r.header(name) != Some(want.as_str()) {
            bad.push(format!(
                "header {name}: {:?} (want {want:?})",
                r.header(name)
            ));
        }
    }
    for (name, want) in &e.header_all {
        if r.header_all(name) != *want {
            bad.push(format!(
                "headers {name}: {:?} (want {want:?})",
                r.header_all(name)
            ));
        }
    }
    for name in e.headers_present.iter().filter(|n| r.header(n).is_none()) {
        bad.push(format!("header {name} missing"));
    }
    for name in e.headers_absent.iter().filter(|n| r.header(n).is_some()) {
        bad.push(format!("header {name} present: {:?}", r.header(name)));
    }
    if let Some(want) = e.body.as_ref().filter(|b| r.body != b.as_bytes()) {
        bad.push(format!("body {:?} (want {want:?})", r.text()));
    }
    if let Some(want) = &e.json {
        let want: serde_json::Value = serde_json::from_str(want).expect("spec json");
        match serde_json::from_slice::<serde_json::Value>(&r.body) {
            Ok(got) if got == want => {}
            Ok(got) => bad.push(format!("json {got} (want {want})")),
            Err(_) => bad.push(format!("body is not JSON: {:?}", r.text())),
        }
    }
    if let Some(want) = e
        .body_contains
        .as_ref()
        .filter(|w| !r.text().contains(w.as_str()))
    {
        bad.push(format!("body {:?} lacks {want:?}", r.text()));
    }
    if let Some(n) = e.body_len.filter(|n| *n != r.body.len()) {
        bad.push(format!("body length {} (want {n})", r.body.len()));
    }
    if let Some(db) = &e.db {
        let want: serde_json::Value = serde_json::from_str(&db.rows).expect("spec db rows");
        let got = db_rows(server, &db.sql);
        if got != want {
            bad.push(format!("db `{}`: {got} (want {want})", db.sql));
        }
    }
    if let Some(needle) = &e.log_contains {
        let needle = needle.replace("{ext}", ext);
        if !log_has(server, &needle) {
            bad.push(format!("log lacks {needle:?}"));
        }
    }
    bad
}

/// Run every case against `<app dir>/app.<ext>`, one server per app dir;
/// panics listing every failure.
fn run(ext: &str) {
    run_specs(ext, |_| true, &[]);
}

/// [`run`] for the spec files `wanted` keeps, the servers started with `extra` flags.
fn run_specs(ext: &str, wanted: impl Fn(&SpecFile) -> bool, extra: &[&str]) {
    let mut servers: BTreeMap<String, Server> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut count = 0;
    for (file, spec) in spec_files().into_iter().filter(|(_, s)| wanted(s)) {
        let server = servers.entry(spec.app.clone()).or_insert_with(|| {
            let app = root().join(&spec.app).join(format!("app.{ext}"));
            let mut flags = vec!["--workers", "1", "--max-instructions", "20000000"];
            flags.extend(extra);
            Server::start(&app, &flags)
        });
        for case in &spec.cases {
            count += 1;
            let over = if ext == "lua" { &case.lua } else { &case.js };
            let mut expect = case.expect.merged(over.as_ref());
            // `{port}`: the server's own port, for apps that call themselves.
            let port = |s: &str| s.replace("{port}", &server.port.to_string());
            expect.json = expect.json.as_deref().map(port);
            expect.body_contains = expect.body_contains.as_deref().map(port);
            let headers: Vec<(String, String)> = case
                .headers
                .iter()
                .map(|(n, v)| (n.clone(), port(v)))
                .collect();
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect();
            let body = request_body(case).map(|b| match String::from_utf8(b) {
                Ok(text) => port(&text).into_bytes(),
                Err(e) => e.into_bytes(),
            });
            let r = server.request(&case.method, &port(&case.path), &headers, body.as_deref());
            for problem in check(server, ext, &expect, &r) {
                failures.push(format!("{file} / {}: {problem}", case.name));
            }
        }
    }
    assert!(count > 0, "no conformance cases found");
    let logs: Vec<String> = servers
        .iter()
        .map(|(app, server)| format!("--- server log ({app}/app.{ext}) ---\n{}", server.log()))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {count} conformance checks failed for app.{ext}:\n  {}\n{}",
        failures.len(),
        failures.join("\n  "),
        logs.join("\n")
    );
}

#[test]
fn conformance_lua() {
    run("lua");
}

#[test]
fn conformance_js() {
    run("js");
}

/// The kv specs again with the store on a real Redis (`--kv`): the same
/// expectations hold on both backends.
fn kv_on_redis(ext: &str) {
    let Some(redis) = cove_testsvc::Redis::start() else {
        return;
    };
    let url = redis.url();
    run_specs(ext, |s| s.app == "kv", &["--kv", &url]);
}

#[test]
fn conformance_kv_on_redis_lua() {
    kv_on_redis("lua");
}

#[test]
fn conformance_kv_on_redis_js() {
    kv_on_redis("js");
}

#[test]
fn every_spec_parses_and_every_difference_says_why() {
    for (file, spec) in spec_files() {
        for case in &spec.cases {
            for (lang, over) in [("lua", &case.lua), ("js", &case.js)] {
                if let Some(o) = over {
                    assert!(
                        o.why.trim().len() >= 10,
                        "{file} / {}: the {lang} override must say why",
                        case.name
                    );
                }
            }
        }
    }
}
