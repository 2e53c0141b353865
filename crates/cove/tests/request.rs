//! `cove request METHOD PATH`: one request to a running server, the response
//! as one JSON line (Hull's `hull agent request`).

use serde_json::{json, Value};

use crate::util::{run, servers::closed_port, Server};

const APP: &str = r#"
app.get("/items", function(req, res)
  res:json({ { id = 1, name = "apple" } })
end)
app.post("/echo", function(req, res)
  res:header("X-Seen", req.headers["x-token"] or "none")
  res:text("got " .. req.body)
end)
"#;

fn app() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("app.lua"), APP).expect("write app.lua");
    dir
}

/// `cove request args…`: the one JSON line and the exit code.
fn request(args: &[&str]) -> (Value, Option<i32>) {
    let mut all = vec!["request"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert_eq!(out.stdout.lines().count(), 1, "one line: {}", out.stdout);
    let v = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout));
    (v, out.code)
}

#[test]
fn a_json_response_comes_back_parsed() {
    let dir = app();
    let server = Server::start(&dir.path().join("app.lua"), &[]);
    let port = server.port.to_string();
    let (v, code) = request(&["GET", "/items", "-p", &port]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["status"], 200);
    assert_eq!(v["body"], json!([{ "id": 1, "name": "apple" }]));
    assert!(v["headers"]["content-type"]
        .as_str()
        .unwrap()
        .starts_with("application/json"));
    assert!(v["elapsed_ms"].is_u64(), "{v}");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["status", "elapsed_ms", "headers", "body"]);
}

#[test]
fn headers_and_a_body_are_sent_and_text_comes_back_as_a_string() {
    let dir = app();
    let server = Server::start(&dir.path().join("app.lua"), &[]);
    let port = server.port.to_string();
    let (v, code) = request(&[
        "post",
        "/echo",
        "-p",
        &port,
        "-H",
        "X-Token: abc",
        "-d",
        "hello",
    ]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["status"], 200);
    assert_eq!(v["body"], "got hello");
    assert_eq!(v["headers"]["x-seen"], "abc");
}

#[test]
fn the_port_comes_from_the_apps_dev_json() {
    let dir = app();
    let server = Server::start(&dir.path().join("app.lua"), &[]);
    // What `cove dev` writes once it listens.
    std::fs::create_dir(dir.path().join(".cove")).unwrap();
    let info = json!({ "port": server.port, "pid": server.pid(), "runtime": "lua" });
    std::fs::write(dir.path().join(".cove/dev.json"), info.to_string()).unwrap();
    let app = dir.path().to_str().unwrap();
    let (v, code) = request(&["GET", "/items", "--app", app]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["body"][0]["name"], "apple");
}

#[test]
fn no_server_is_an_error_that_says_how_to_start_one() {
    let port = closed_port().to_string();
    let (v, code) = request(&["GET", "/", "-p", &port]);
    assert_eq!(code, Some(1));
    assert_eq!(
        v,
        json!({ "error": format!(
            "cannot connect to 127.0.0.1:{port} — is `cove dev` running? (start it with `cove dev`)"
        ) })
    );
    let (v, code) = request(&["GET", "/", "-p", &port, "-H", "no colon"]);
    assert_eq!(code, Some(1));
    assert!(v["error"].as_str().unwrap().contains("Name: value"), "{v}");
}

#[test]
fn hulls_spelling_keeps_the_body_as_text() {
    let dir = app();
    let server = Server::start(&dir.path().join("app.lua"), &[]);
    let port = server.port.to_string();
    let out = run(&["agent", "request", "GET", "/items", "-p", &port]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).expect("one JSON line");
    assert_eq!(v["status"], 200);
    assert_eq!(v["body"], r#"[{"id":1,"name":"apple"}]"#);
    let names: Vec<&String> = v["headers"].as_object().unwrap().keys().collect();
    assert!(
        names.iter().any(|n| n.eq_ignore_ascii_case("content-type")),
        "{names:?}"
    );
}
