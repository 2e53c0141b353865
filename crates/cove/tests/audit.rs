//! The audit log (`--audit`, issue 38; Hull §11.4; format in
//! docs/security.md): one JSON line on stderr per capability use, naming
//! the worker and the request, never a secret. The app is
//! tests/fixtures/audit: each route uses one capability; under `/l/` the
//! logger middleware names requests (X-Request-ID).

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::servers::{echo, Sink};
use crate::util::{both, Lang, Server, TIMEOUT};

const SECRET: &str = "env-secret-value-9f3";
const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
/// Values the app handles that no audit line may contain.
const HIDDEN: [&str; 5] = [
    SECRET,
    KEY,
    "query-secret-123",
    "subject-secret-42",
    "body-secret-77",
];

fn app(lang: Lang) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audit")
        .join(format!("app.{}", lang.ext()))
}

const ENV: [(&str, &str); 2] = [("AUDIT_SECRET", SECRET), ("AUDIT_KEY", KEY)];

fn start(lang: Lang, extra: &[&str]) -> Server {
    Server::start_with_env(&app(lang), extra, &ENV)
}

/// The audit lines written so far, each checked for the common keys.
fn audit_lines(server: &Server) -> Vec<Value> {
    server
        .log()
        .lines()
        .filter(|l| l.starts_with("{\"ts\":"))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys[..4], ["ts", "cap", "worker", "request_id"], "{l}");
            let ts = v["ts"].as_str().unwrap();
            // 2026-03-07T11:34:56.789Z
            assert_eq!(ts.len(), 24, "{l}");
            assert_eq!(
                (&ts[10..11], &ts[19..20], &ts[23..]),
                ("T", ".", "Z"),
                "{l}"
            );
            v
        })
        .collect()
}

/// Wait until at least `n` audit lines match `want` (a line may reach the
/// log after the response it belongs to); those lines.
fn wait_lines(server: &Server, n: usize, want: impl Fn(&Value) -> bool) -> Vec<Value> {
    let start = Instant::now();
    loop {
        let found: Vec<Value> = audit_lines(server).into_iter().filter(&want).collect();
        if found.len() >= n {
            return found;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "{n} matching audit lines never came:\n{}",
            server.log()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// The lines of the request whose response carried `X-Request-ID: id`.
fn of_request(server: &Server, id: &str, n: usize) -> Vec<Value> {
    wait_lines(server, n, |v| v["request_id"] == id)
}

fn get_logged(server: &Server, path: &str) -> (String, Value) {
    let res = server.get(path);
    assert_eq!(res.status, 200, "{path}: {}\n{}", res.text(), server.log());
    let id = res
        .header("x-request-id")
        .expect("logger middleware")
        .to_string();
    (id, res.json())
}

fn capability_uses_are_logged(lang: Lang) {
    let upstream = echo(None);
    let sink = Sink::start(None);
    let server = start(lang, &["--audit"]);

    // Loading: once per worker, before any request.
    let load = wait_lines(&server, 2, |v| {
        v["cap"] == "env.get" && v["request_id"].is_null() && v["worker"].is_u64()
    });
    let mut workers: Vec<u64> = load.iter().map(|v| v["worker"].as_u64().unwrap()).collect();
    workers.sort();
    workers.dedup();
    assert_eq!(workers, [0, 1]);
    assert_eq!(load[0]["name"], "AUDIT_SECRET");
    assert_eq!(load[0]["result"], "ok");
    wait_lines(&server, 1, |v| {
        v["cap"] == "db.exec"
            && v["request_id"].is_null()
            && v["sql"]
                .as_str()
                .unwrap()
                .starts_with("CREATE TABLE IF NOT EXISTS _hull_sessions")
    });

    // env: the name and the outcome.
    let (id, _) = get_logged(&server, "/l/env");
    let env = of_request(&server, &id, 3);
    let seen: Vec<(&str, &str)> = env
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v["result"].as_str().unwrap()))
        .collect();
    assert_eq!(
        seen,
        [
            ("AUDIT_SECRET", "ok"),
            ("AUDIT_UNSET", "missing"),
            ("HOME", "denied")
        ]
    );
    assert!(env
        .iter()
        .all(|v| v["cap"] == "env.get" && v["worker"].is_u64()));

    // http: where to and how it went; the path without its query.
    let (id, body) = get_logged(&server, &format!("/l/http?port={upstream}"));
    assert_eq!(body["status"], 200, "{body}");
    let http = of_request(&server, &id, 2);
    let sent = &http[0];
    assert_eq!(sent["cap"], "http.request");
    assert_eq!(
        (&sent["method"], &sent["scheme"], &sent["host"]),
        (&"GET".into(), &"http".into(), &"127.0.0.1".into())
    );
    assert_eq!(sent["port"], upstream);
    assert_eq!(sent["path"], "/echo");
    assert_eq!(sent["status"], 200);
    assert_eq!(sent["result"], "ok");
    assert!(sent["duration_ms"].is_u64(), "{sent}");
    let denied = &http[1];
    assert_eq!(denied["host"], "evil.example");
    assert_eq!(denied["result"], "denied");
    assert!(denied["status"].is_null());

    // smtp: the envelope, not the message.
    let (id, body) = get_logged(&server, &format!("/l/mail?port={}", sink.port));
    assert_eq!(body["ok"], true, "{body}");
    let mail = &of_request(&server, &id, 1)[0];
    assert_eq!(mail["cap"], "smtp.send");
    assert_eq!(mail["host"], "127.0.0.1");
    assert_eq!(mail["port"], sink.port);
    assert_eq!(mail["tls"], "plain");
    assert_eq!(mail["auth"], false);
    assert_eq!(mail["from"], "app@example.com");
    assert_eq!(mail["to"], "you@example.com");
    assert_eq!(mail["result"], "ok");
    assert!(mail.get("subject").is_none() && mail.get("body").is_none());

    // crypto: which function and which key, by fingerprint.
    let (id, body) = get_logged(&server, "/l/crypto");
    assert_eq!(body["sig_ok"], true, "{body}");
    let crypto = of_request(&server, &id, 5);
    let fns: Vec<&str> = crypto.iter().filter_map(|v| v["fn"].as_str()).collect();
    assert_eq!(
        fns,
        [
            "secretbox",
            "ed25519_keypair",
            "ed25519_sign",
            "ed25519_verify"
        ]
    );
    let key_of = |f: &str| {
        let line = crypto.iter().find(|v| v["fn"] == f).unwrap();
        let keys = line["keys"].as_array().unwrap();
        assert_eq!(keys.len(), 1, "{line}");
        keys[0].as_str().unwrap().to_string()
    };
    let made = key_of("ed25519_keypair");
    assert_eq!(made.len(), 16);
    assert_eq!(key_of("ed25519_sign"), made, "one key, one fingerprint");
    assert_ne!(key_of("secretbox"), made);
    let sk = body["sk"].as_str().unwrap().to_string();

    // The stdlib's write to its reserved table; the session id stays out.
    let (id, body) = get_logged(&server, "/l/session");
    let write = &of_request(&server, &id, 1)[0];
    assert_eq!(write["cap"], "db.exec");
    assert_eq!(
        write["sql"],
        "INSERT INTO _hull_sessions (id, data, created_at, last_accessed, expires_at) VALUES (?, ?, ?, ?, ?)"
    );
    assert_eq!(write["nparams"], 5);
    assert_eq!(write["changes"], 1);
    assert_eq!(write["result"], "ok");
    let session_id = body["id"].as_str().unwrap().to_string();

    let all: String = audit_lines(&server).iter().map(|v| v.to_string()).collect();
    for hidden in HIDDEN
        .iter()
        .copied()
        .chain([sk.as_str(), session_id.as_str()])
    {
        assert!(
            !all.contains(hidden),
            "{hidden:?} is in the audit log:\n{all}"
        );
    }
}

/// Without the logger middleware, Cove names each request itself.
fn requests_without_an_id_get_one(lang: Lang) {
    let server = start(lang, &["--audit"]);
    for _ in 0..2 {
        assert_eq!(server.get("/env").status, 200);
    }
    let lines = wait_lines(&server, 6, |v| {
        v["cap"] == "env.get" && !v["request_id"].is_null()
    });
    let ids: Vec<&str> = lines
        .iter()
        .map(|v| v["request_id"].as_str().unwrap())
        .collect();
    for (id, line) in ids.iter().zip(&lines) {
        let (w, n) = id.split_once('-').expect("w<worker>-<n>");
        assert_eq!(w, format!("w{}", line["worker"]), "{line}");
        assert!(u64::from_str_radix(n, 16).is_ok(), "{line}");
    }
    // Three reads per request, one id per request.
    assert_eq!(ids[0], ids[2]);
    assert_eq!(ids[3], ids[5]);
    assert_ne!(ids[0], ids[3]);
}

/// A request that waits on an outbound call lets another run on the same
/// worker; what each does after is still logged under its own id.
fn interleaved_requests_keep_their_ids(lang: Lang) {
    let upstream = echo(None);
    let server = start(lang, &["--audit", "--workers", "1"]);
    let slow = thread::spawn({
        let mut conn = server.conn();
        move || conn.request("GET", &format!("/l/slow?port={upstream}"), &[], None)
    });
    // The logger middleware has run for it: it is (about to be) waiting on
    // /slow, which takes over a second to answer.
    server.wait_for_log("path=/l/slow");
    let (quick, _) = get_logged(&server, "/l/env");
    let res = slow.join().unwrap();
    assert_eq!(res.status, 200, "{}", res.text());
    let slow_id = res.header("x-request-id").unwrap().to_string();
    assert_ne!(slow_id, quick);
    let lines = of_request(&server, &slow_id, 2);
    assert_eq!(lines[0]["cap"], "http.request");
    assert_eq!(lines[0]["path"], "/slow");
    assert_eq!(
        (&lines[1]["cap"], &lines[1]["name"]),
        (&"env.get".into(), &"AUDIT_SECRET".into())
    );
    assert_eq!(of_request(&server, &quick, 3).len(), 3);
    // Nothing after loading went unattributed.
    let loaded = audit_lines(&server)
        .iter()
        .rposition(|v| v["request_id"].is_null())
        .unwrap();
    let first_request = audit_lines(&server)
        .iter()
        .position(|v| !v["request_id"].is_null())
        .unwrap();
    assert!(loaded < first_request, "{}", server.log());
}

/// With the log off, nothing is written, and responses are the same.
fn audit_off_writes_nothing(lang: Lang) {
    let upstream = echo(None);
    let sink = Sink::start(None);
    let server = Server::start_with_env(
        &app(lang),
        &[],
        &[ENV[0], ENV[1], ("COVE_AUDIT", "0"), ("HULL_AUDIT", "")],
    );
    for path in [
        "/env".to_string(),
        format!("/http?port={upstream}"),
        format!("/mail?port={}", sink.port),
        "/crypto".to_string(),
        "/session".to_string(),
    ] {
        assert_eq!(server.get(&path).status, 200, "{path}");
    }
    // Anything these wrote comes before the logger's line for this one.
    let (_, _) = get_logged(&server, "/l/env");
    let log = server.wait_for_log("path=/l/env");
    assert!(audit_lines(&server).is_empty(), "{log}");
}

both!(
    capability_uses_are_logged,
    requests_without_an_id_get_one,
    interleaved_requests_keep_their_ids,
    audit_off_writes_nothing,
);

/// `COVE_AUDIT=1` and Hull's `HULL_AUDIT=1` turn it on; Hull takes only
/// exactly `1`.
#[test]
fn environment_switches() {
    for (var, value, on) in [
        ("COVE_AUDIT", "1", true),
        ("COVE_AUDIT", "true", true),
        ("HULL_AUDIT", "1", true),
        ("HULL_AUDIT", "yes", false),
        ("COVE_AUDIT", "0", false),
    ] {
        let server = Server::start_with_env(&app(Lang::Lua), &[], &[ENV[0], ENV[1], (var, value)]);
        // Load-time lines come before the startup line, which start() waited for.
        let found = !audit_lines(&server).is_empty();
        assert_eq!(found, on, "{var}={value}:\n{}", server.log());
    }
}

/// The kernel sandbox says what it applied, or that it is off.
#[test]
fn sandbox_application_is_logged() {
    let server = start(Lang::Lua, &["--audit"]);
    let sandbox = wait_lines(&server, 1, |v| v["cap"] == "sandbox").remove(0);
    assert!(sandbox["request_id"].is_null() && sandbox["worker"].is_null());
    if cfg!(target_os = "linux") {
        let result = sandbox["result"].as_str().unwrap();
        assert!(["applied", "partial"].contains(&result), "{sandbox}");
        assert!(sandbox["seccomp"].is_boolean(), "{sandbox}");
        let write = sandbox["write"].as_array().unwrap();
        assert!(
            write
                .iter()
                .any(|p| p.as_str().unwrap().ends_with("data.db")),
            "the database is writable: {sandbox}"
        );
        // The manifest lists hosts: connections go anywhere the
        // capability's host list allows.
        assert_eq!(sandbox["connect"], "any");
        assert_eq!(sandbox["dns"], true);
    }
    let server = start(Lang::Lua, &["--audit", "--no-sandbox"]);
    let off = wait_lines(&server, 1, |v| v["cap"] == "sandbox").remove(0);
    assert_eq!(
        (&off["result"], &off["reason"]),
        (&"off".into(), &"--no-sandbox".into())
    );
}

/// On PostgreSQL the stdlib's statements wait off the worker; their lines
/// still name the request.
fn stdlib_writes_on_postgres_are_logged(lang: Lang) {
    let Some(pg) = cove_testsvc::Postgres::start() else {
        return;
    };
    let server = Server::try_start_on_env(&app(lang), &pg.url(), &["--audit"], &ENV)
        .unwrap_or_else(|log| panic!("cove did not start:\n{log}"));
    let (id, body) = get_logged(&server, "/l/session");
    let write = &of_request(&server, &id, 1)[0];
    assert_eq!(write["cap"], "db.exec", "{write}");
    assert!(
        write["sql"]
            .as_str()
            .unwrap()
            .starts_with("INSERT INTO _hull_sessions"),
        "{write}"
    );
    assert_eq!(
        (&write["changes"], &write["result"]),
        (&1.into(), &"ok".into())
    );
    let all: String = audit_lines(&server).iter().map(|v| v.to_string()).collect();
    assert!(!all.contains(body["id"].as_str().unwrap()), "{all}");
}

both!(stdlib_writes_on_postgres_are_logged);
