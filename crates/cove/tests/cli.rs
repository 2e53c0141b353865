//! Command line: flags, exit codes, load failures.

use crate::util::{fixture, line_of, run};

fn serve(app: &str) -> crate::util::Exit {
    let path = fixture(app);
    run(&[
        "-p",
        "0",
        "-d",
        "data.db",
        "--workers",
        "1",
        path.to_str().unwrap(),
    ])
}

#[test]
fn version_and_help_exit_0() {
    let v = run(&["--version"]);
    assert_eq!(v.code, Some(0), "{}", v.stderr);
    assert!(
        v.stdout
            .contains(&format!("cove {}", env!("CARGO_PKG_VERSION"))),
        "{}",
        v.stdout
    );
    let h = run(&["--help"]);
    assert_eq!(h.code, Some(0), "{}", h.stderr);
    for flag in ["--port", "--db", "--max-body", "--workers", "--no-migrate"] {
        assert!(h.stdout.contains(flag), "{flag} missing from --help");
    }
}

#[test]
fn unknown_flag_exits_1() {
    let r = run(&["--nope"]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("--nope"), "{}", r.stderr);
}

#[test]
fn bad_values_exit_1_with_a_message() {
    let app = fixture("basic");
    let app = app.to_str().unwrap();
    for (args, needle) in [
        (vec!["-p", "abc", app], "abc"),
        (vec!["-m", "12x", app], "12x"),
        (vec!["--max-body", "lots", app], "lots"),
        (vec!["-l", "loud", app], "loud"),
        (vec!["--workers", "0", app], "0"),
    ] {
        let r = run(&args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn missing_app_exits_1() {
    let r = run(&["-p", "0", "/nonexistent/app.lua"]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("/nonexistent/app.lua"), "{}", r.stderr);
}

#[test]
fn syntax_error_exits_1_naming_the_line() {
    let r = serve("syntax_error");
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let line = line_of(&fixture("syntax_error"), "marker: syntax error");
    assert!(
        r.stderr.contains(&format!("app.lua:{line}")),
        "{}",
        r.stderr
    );
}

#[test]
fn runtime_error_at_load_exits_1_naming_the_line() {
    let r = serve("runtime_error");
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let line = line_of(&fixture("runtime_error"), "marker: runtime error");
    assert!(
        r.stderr.contains(&format!("app.lua:{line}")),
        "{}",
        r.stderr
    );
}

#[test]
fn app_without_routes_exits_1() {
    let r = serve("no_routes");
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("no routes"), "{}", r.stderr);
}

#[test]
fn baseline_serves_the_benchmark_bodies_without_a_script() {
    let s = crate::util::Server::baseline();
    let hello = s.get("/hello");
    assert_eq!((hello.status, hello.text().as_str()), (200, "Hello World!"));
    assert_eq!(
        hello.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    let json = s.get("/json");
    assert_eq!(json.json(), serde_json::json!({"message": "Hello, World!"}));
}

#[test]
fn a_directory_serves_its_app_js_before_its_app_lua() {
    let dir = crate::util::example_file("hello", "js");
    let dir = dir.parent().expect("example dir");
    let s = crate::util::Server::start(dir, &[]);
    s.wait_for_log("JavaScript runtime");
    assert_eq!(
        s.get("/").json()["message"],
        "Hello from Cove + JavaScript!"
    );
}

/// A second server on a port a first one serves would share it (SO_REUSEPORT)
/// and split the requests — and the writes, on another database — between
/// them. It refuses to start, naming the process that holds the port, and
/// the first server keeps every request.
#[test]
fn a_second_server_on_a_taken_port_refuses_to_start() {
    let first = crate::util::Server::fixture("basic", &[]);
    let port = first.port.to_string();
    let app = fixture("basic");
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.db");
    for mode in [&[][..], &["dev"][..]] {
        let mut args: Vec<&str> = mode.to_vec();
        args.extend([
            "-p",
            &port,
            "-d",
            other.to_str().unwrap(),
            app.to_str().unwrap(),
        ]);
        let out = run(&args);
        assert_eq!(out.code, Some(1), "{mode:?}: {}", out.stderr);
        let pid = format!("pid {}, cove", first.pid());
        assert!(
            out.stderr
                .contains(&format!("cannot listen on 127.0.0.1:{port}"))
                && out
                    .stderr
                    .matches("another process already listens there")
                    .count()
                    == 1
                && out.stderr.contains(&pid),
            "{mode:?}: {}",
            out.stderr
        );
        assert!(
            !other.exists(),
            "{mode:?}: the refused server made a database"
        );
    }
    assert_eq!(
        first.get("/health").status,
        200,
        "the first server still serves"
    );
}
