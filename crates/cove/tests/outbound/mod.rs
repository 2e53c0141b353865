//! Outbound `http` and `smtp` (Hull §6.7, §6.8) from Lua and JS apps,
//! against local servers started here: requests and messages arrive as
//! sent, refusals say why, and a request in flight does not stall the
//! other connections of its worker.

mod stall;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::servers::{closed_port, echo, Sink, Tls};
use crate::util::Server;

fn fixture(dir: &str, ext: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/outbound")
        .join(dir)
        .join(format!("app.{ext}"))
}

fn app(ext: &str) -> PathBuf {
    fixture("", ext)
}

/// The routes that call http in each runtime: Lua, JS sync, JS async.
const CALLERS: [(&str, &str); 3] = [("lua", "/call"), ("js", "/call"), ("js", "/call-async")];

/// `POST route {fn, args}`: the handler's `{ok, result | error}`.
fn call(server: &Server, route: &str, f: &str, args: Value) -> Value {
    let body = json!({ "fn": f, "args": args }).to_string();
    let res = server.post(route, &body);
    assert_eq!(res.status, 200, "{}\n{}", res.text(), server.log());
    res.json()
}

fn error_of(reply: &Value) -> &str {
    assert_eq!(reply["ok"], false, "{reply}");
    reply["error"].as_str().expect("error text")
}

#[test]
fn requests_reach_the_server_and_responses_come_back() {
    let port = echo(None);
    let url = format!("http://127.0.0.1:{port}/echo?q=1");
    for (ext, route) in CALLERS {
        let server = Server::start(&app(ext), &[]);
        let headers = json!({ "headers": { "X-Token": "t1", "X-Num": 7 } });
        let cases = [
            ("get", json!([url, headers]), "GET", ""),
            ("post", json!([url, "payload", headers]), "POST", "payload"),
            ("put", json!([url, "p2", headers]), "PUT", "p2"),
            ("patch", json!([url, "p3", headers]), "PATCH", "p3"),
            ("delete", json!([url, headers]), "DELETE", ""),
            (
                "request",
                json!(["options", url, { "body": "b", "headers": { "X-Token": "t1", "X-Num": "7" } }]),
                "OPTIONS",
                "b",
            ),
        ];
        for (f, args, method, body) in cases {
            let reply = call(&server, route, f, args);
            assert_eq!(reply["ok"], true, "{ext} {route} {f}: {reply}");
            let r = &reply["result"];
            assert_eq!(r["status"], 200, "{r}");
            assert_eq!(r["headers"]["x-echo"], "yes", "{r}");
            assert_eq!(r["headers"]["x-dup"], "2", "last duplicate wins: {r}");
            assert_eq!(r["headers"]["content-type"], "application/json");
            let seen: Value = serde_json::from_str(r["body"].as_str().unwrap()).unwrap();
            assert_eq!(seen["method"], method, "{seen}");
            assert_eq!(seen["target"], "/echo?q=1");
            assert_eq!(seen["body"], body);
            assert_eq!(seen["headers"]["x-token"], "t1", "{seen}");
            assert_eq!(seen["headers"]["x-num"], "7", "{seen}");
            assert_eq!(seen["headers"]["connection"], "close", "{seen}");
            assert_eq!(seen["headers"]["host"], format!("127.0.0.1:{port}"));
            assert!(seen["headers"].get("user-agent").is_none(), "{seen}");
        }
        if ext == "js" {
            let reply = call(&server, route, "del", json!([url]));
            assert_eq!(reply["result"]["status"], 200, "{reply}");
        }
    }
}

#[test]
fn refusals_and_failures_say_why() {
    let port = echo(None);
    let closed = closed_port();
    for (ext, route) in CALLERS {
        let server = Server::start(&app(ext), &[]);
        let e = call(&server, route, "get", json!(["http://evil.example/x"]));
        assert!(
            error_of(&e).ends_with(r#"http.get failed: host "evil.example" is not in the manifest's hosts list (hosts: "127.0.0.1", "localhost")"#),
            "{e}"
        );
        let e = call(
            &server,
            route,
            "post",
            json!([format!("http://127.0.0.1:{closed}/"), "x"]),
        );
        assert!(
            error_of(&e).ends_with(&format!(
                "http.POST failed: connection refused (127.0.0.1:{closed})"
            )),
            "{e}"
        );
        let e = call(
            &server,
            route,
            "get",
            json!([format!("http://127.0.0.1:{port}/big")]),
        );
        assert!(
            error_of(&e)
                .ends_with("http.get failed: the response body is larger than 4194304 bytes"),
            "{e}"
        );
        let bad = json!({ "headers": { "X-A": "1\r\nX-Injected: 1" } });
        let e = call(
            &server,
            route,
            "get",
            json!([format!("http://127.0.0.1:{port}/"), bad]),
        );
        assert!(
            error_of(&e).contains(r#"header "X-A" contains CR, LF or NUL"#),
            "{e}"
        );
        let e = call(&server, route, "get", json!(["ftp://127.0.0.1/"]));
        assert!(error_of(&e).contains("only http and https"), "{e}");
    }
}

#[test]
fn without_hosts_http_and_smtp_are_not_configured() {
    for ext in ["lua", "js"] {
        let server = Server::start(&fixture("nohosts", ext), &[]);
        for (path, what) in [("/http", "http"), ("/smtp", "smtp")] {
            let reply = server.get(path).json();
            let want = format!("{what} not configured (no hosts in manifest)");
            assert!(error_of(&reply).ends_with(&want), "{ext} {path}: {reply}");
        }
    }
    let server = Server::start(&fixture("nohosts", "js"), &[]);
    let reply = server.get("/http-async").json();
    assert_eq!(
        error_of(&reply),
        "http not configured (no hosts in manifest)"
    );
}

#[test]
fn https_is_verified_against_the_system_roots() {
    let tls = Tls::new();
    let port = echo(Some(tls.config.clone()));
    let url = format!("https://localhost:{port}/secure");
    // Trusted through SSL_CERT_FILE, as a system root would be.
    let server = Server::start_with_env(&app("lua"), &[], &[tls.env()]);
    let reply = call(&server, "/call", "get", json!([url]));
    assert_eq!(reply["result"]["status"], 200, "{reply}");
    let server = Server::start_with_env(&app("js"), &[], &[tls.env()]);
    let reply = call(&server, "/call-async", "get", json!([url]));
    assert_eq!(reply["result"]["status"], 200, "{reply}");
    // Not trusted otherwise.
    let server = Server::start(&app("js"), &[]);
    let e = call(&server, "/call", "get", json!([url]));
    assert!(
        error_of(&e).starts_with("http.get failed: TLS: invalid peer certificate"),
        "{e}"
    );
}

/// The smtp routes: Lua, JS sync, JS async.
const MAILERS: [(&str, &str); 3] = [("lua", "/mail"), ("js", "/mail"), ("js", "/mail-async")];

fn mail(server: &Server, route: &str, opts: Value) -> Value {
    let res = server.post(route, &opts.to_string());
    assert_eq!(res.status, 200, "{}\n{}", res.text(), server.log());
    let reply = res.json();
    assert_eq!(reply["ok"], true, "smtp.send raised: {reply}");
    reply["result"].clone()
}

fn message(port: u16) -> Value {
    json!({
        "host": "127.0.0.1", "port": port, "tls": false,
        "from": "app@example.com", "to": "you@example.com",
        "cc": ["c1@example.com", "c2@example.com"], "reply_to": "help@example.com",
        "subject": "Hello", "content_type": "text/html",
        "body": "<p>hi</p>\n.hidden line\nend\n",
    })
}

#[test]
fn smtp_sends_what_the_sink_receives() {
    for (ext, route) in MAILERS {
        let sink = Sink::start(None);
        let server = Server::start(&app(ext), &[]);
        let result = mail(&server, route, message(sink.port));
        assert_eq!(result, json!({ "ok": true }), "{ext} {route}");
        let sessions = sink.wait_sessions(1);
        assert_eq!(sessions.len(), 1, "{sessions:?}");
        let s = &sessions[0];
        assert_eq!(s.commands[0], "EHLO localhost");
        for cmd in [
            "MAIL FROM:<app@example.com>",
            "RCPT TO:<you@example.com>",
            "RCPT TO:<c1@example.com>",
            "RCPT TO:<c2@example.com>",
            "DATA",
        ] {
            assert!(
                s.commands.iter().any(|c| c.starts_with(cmd)),
                "{cmd} in {:?}",
                s.commands
            );
        }
        assert!(!s.commands.iter().any(|c| c.starts_with("AUTH")));
        let m = &s.messages[0];
        for header in [
            "From: app@example.com\r\n",
            "To: you@example.com\r\n",
            "Cc: c1@example.com, c2@example.com\r\n",
            "Reply-To: help@example.com\r\n",
            "Subject: Hello\r\n",
            "MIME-Version: 1.0\r\n",
            "Content-Type: text/html; charset=utf-8\r\n",
            "Date: ",
        ] {
            assert!(m.contains(header), "{header:?} in\n{m}");
        }
        // A line starting with a dot travels dot-stuffed.
        assert!(m.contains("\r\n..hidden line\r\n"), "{m}");
    }
}

#[test]
fn smtp_refusals_are_results() {
    for (ext, route) in MAILERS {
        let sink = Sink::start(None);
        let server = Server::start(&app(ext), &[]);
        let mut opts = message(sink.port);
        opts.as_object_mut().unwrap().remove("to");
        let r = mail(&server, route, opts);
        assert_eq!(r, json!({ "ok": false, "error": "to required" }));
        let mut opts = message(sink.port);
        opts["username"] = "user".into();
        opts["password"] = "secret".into();
        let r = mail(&server, route, opts);
        assert_eq!(r["ok"], false);
        let e = r["error"].as_str().unwrap();
        assert!(e.starts_with("smtp send failed: refusing to send the username and password over a plain-text connection"), "{e}");
        let mut opts = message(sink.port);
        opts["host"] = "mail.evil.example".into();
        let r = mail(&server, route, opts);
        assert!(r["error"]
            .as_str()
            .unwrap()
            .contains("is not in the manifest's hosts list"));
        // Implicit TLS against a plain-text server fails the handshake.
        let mut opts = message(sink.port);
        opts["tls"] = 2.into();
        let r = mail(&server, route, opts);
        let e = r["error"].as_str().unwrap();
        assert!(
            e.starts_with("smtp send failed: ")
                && e.ends_with(&format!("(127.0.0.1:{})", sink.port)),
            "{e}"
        );
        // Credentials never reached the sink; only the TLS attempt connected.
        let sessions = sink.wait_sessions(1);
        assert_eq!(sessions.len(), 1, "{sessions:?}");
        assert!(
            sessions
                .iter()
                .all(|s| s.commands.iter().all(|c| !c.starts_with("AUTH"))),
            "{sessions:?}"
        );
        assert!(
            sessions.iter().all(|s| s.messages.is_empty()),
            "{sessions:?}"
        );
    }
}

#[test]
fn smtp_starttls_with_auth() {
    let tls = Tls::new();
    for (ext, route) in [("lua", "/mail"), ("js", "/mail-async")] {
        let sink = Sink::start(Some(tls.config.clone()));
        let server = Server::start_with_env(&app(ext), &[], &[tls.env()]);
        let mut opts = message(sink.port);
        opts["host"] = "localhost".into();
        opts["tls"] = true.into();
        opts["username"] = "user".into();
        opts["password"] = "secret".into();
        let r = mail(&server, route, opts);
        assert_eq!(r, json!({ "ok": true }), "{ext}");
        let s = &sink.wait_sessions(1)[0];
        assert!(s.tls, "{s:?}");
        let starttls = s
            .commands
            .iter()
            .position(|c| c == "STARTTLS")
            .expect("STARTTLS sent");
        let auth = s
            .commands
            .iter()
            .position(|c| c.starts_with("AUTH PLAIN"))
            .expect("AUTH sent");
        assert!(
            starttls < auth,
            "AUTH only after STARTTLS: {:?}",
            s.commands
        );
        assert_eq!(s.messages.len(), 1);
    }
}

#[test]
fn cove_test_never_configures_http_or_smtp() {
    let dir = app("lua");
    let dir = dir.parent().expect("fixture dir").to_str().expect("utf-8");
    let out = crate::util::run(&["test", dir]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout.matches("3/3 tests passed").count(),
        2,
        "{}",
        out.stdout
    );
}
