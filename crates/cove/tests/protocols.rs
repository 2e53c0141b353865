//! HTTPS (with certificate reload), HTTP/2 over TLS by ALPN, h2c with prior
//! knowledge, and the HTTP → HTTPS redirect, driven by a real client: curl
//! (built with nghttp2).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{fixture, Server};

/// A fresh self-signed pair for `localhost` and 127.0.0.1 in `dir`.
fn write_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let pair = rcgen::generate_simple_self_signed(names).expect("certificate");
    let (cert, key) = (
        dir.join(format!("{name}.crt")),
        dir.join(format!("{name}.key")),
    );
    std::fs::write(&cert, pair.cert.pem()).unwrap();
    std::fs::write(&key, pair.signing_key.serialize_pem()).unwrap();
    (cert, key)
}

/// What curl got: status, HTTP version ("1.1", "2") and body; `Err` with
/// curl's message when the request failed (a certificate it does not trust).
fn curl(args: &[&str]) -> Result<(u16, String, String), String> {
    let out = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "20",
            "-w",
            "\n%{http_code} %{http_version}",
        ])
        .args(args)
        .output()
        .expect("curl runs (apt install curl)");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let (body, tail) = text.rsplit_once('\n').expect("status line");
    let (code, version) = tail.split_once(' ').expect("code and version");
    Ok((code.parse().unwrap(), version.to_string(), body.to_string()))
}

fn tls_args<'a>(cert: &'a Path, key: &'a Path) -> [&'a str; 4] {
    [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]
}

fn https(s: &Server, path: &str) -> String {
    format!("https://localhost:{}{path}", s.port)
}

#[test]
fn https_serves_http2_and_http1_by_alpn() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = write_pair(dir.path(), "a");
    let s = Server::fixture("basic", &tls_args(&cert, &key));
    s.wait_for_log("listening on https://");
    let ca = cert.to_str().unwrap();
    let url = https(&s, "/health");
    let (code, version, body) = curl(&["--cacert", ca, "--http2", &url]).unwrap();
    assert_eq!(
        (code, version.as_str(), body.as_str()),
        (200, "2", r#"{"status":"ok"}"#)
    );
    let (code, version, _) = curl(&["--cacert", ca, "--http1.1", &url]).unwrap();
    assert_eq!((code, version.as_str()), (200, "1.1"));
    // Params, query and a body, over HTTP/2.
    let (_, _, body) = curl(&["--cacert", ca, "--http2", &https(&s, "/params/x/y")]).unwrap();
    assert_eq!(body, r#"{"a":"x","b":"y"}"#);
    let (code, _, body) = curl(&[
        "--cacert",
        ca,
        "--http2",
        "--data-binary",
        "hello",
        &https(&s, "/body"),
    ])
    .unwrap();
    assert_eq!((code, body.as_str()), (200, r#"{"len":5}"#));
    // A handler error is a 500 on an HTTP/2 stream too, and serving goes on.
    let (code, _, _) = curl(&["--cacert", ca, "--http2", &https(&s, "/throw")]).unwrap();
    assert_eq!(code, 500);
    // Plain HTTP on the HTTPS port is not answered as HTTP.
    assert!(curl(&[&format!("http://127.0.0.1:{}/health", s.port)]).map_or(true, |r| r.0 != 200));
    // A client that does not trust the certificate is refused by curl.
    assert!(curl(&["--http2", &url]).is_err());
}

#[test]
fn http2_keeps_the_body_limit_and_many_streams_share_a_connection() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = write_pair(dir.path(), "a");
    let mut args = tls_args(&cert, &key).to_vec();
    args.extend(["--max-body", "1k"]);
    let s = Server::fixture("basic", &args);
    let ca = cert.to_str().unwrap();
    // Over the limit by a little and by more than a flow-control window:
    // a 413, not a reset stream, every time (the body is read and dropped).
    for size in [4096, 200_000] {
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; size]).unwrap();
        let from = format!("@{}", big.display());
        for _ in 0..5 {
            let (code, version, _) = curl(&[
                "--cacert",
                ca,
                "--http2",
                "--data-binary",
                &from,
                &https(&s, "/body"),
            ])
            .unwrap();
            assert_eq!((code, version.as_str()), (413, "2"), "{size} bytes");
        }
    }
    // A header list over --max-header: the stream is refused (HTTP/1.1: 431).
    let huge = format!("X-Big: {}", "a".repeat(70_000));
    assert!(curl(&[
        "--cacert",
        ca,
        "--http2",
        "-H",
        &huge,
        &https(&s, "/health")
    ])
    .is_err());
    // Ten requests on one connection (curl reuses it), then the server still answers.
    let urls: Vec<String> = (0..10)
        .map(|i| https(&s, &format!("/params/{i}/z")))
        .collect();
    let mut args = vec!["--cacert", ca, "--http2", "--parallel"];
    args.extend(urls.iter().map(String::as_str));
    let (code, version, body) = curl(&args).unwrap();
    assert_eq!((code, version.as_str()), (200, "2"));
    assert_eq!(body.matches(r#""b":"z""#).count(), 10, "{body}");
}

#[test]
fn h2c_with_prior_knowledge_and_http1_share_a_plain_port() {
    let s = Server::fixture("basic", &["--h2c"]);
    let url = format!("http://127.0.0.1:{}/health", s.port);
    let (code, version, _) = curl(&["--http2-prior-knowledge", &url]).unwrap();
    assert_eq!((code, version.as_str()), (200, "2"));
    let (code, version, _) = curl(&["--http1.1", &url]).unwrap();
    assert_eq!((code, version.as_str()), (200, "1.1"));
    assert_eq!(s.get("/health").status, 200);
    // Without --h2c the preface is not HTTP/1.1: refused, not served.
    let plain = Server::fixture("basic", &[]);
    let url = format!("http://127.0.0.1:{}/health", plain.port);
    assert!(curl(&["--http2-prior-knowledge", &url]).is_err());
}

#[test]
fn plain_http_is_redirected_to_https() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = write_pair(dir.path(), "a");
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port().to_string();
    drop(free);
    let mut args = tls_args(&cert, &key).to_vec();
    args.extend(["--redirect-http", &port]);
    let s = Server::fixture("basic", &args);
    let out = Command::new("curl")
        .args([
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{redirect_url}",
        ])
        .arg(format!("http://localhost:{port}/query?a=1"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("308 https://localhost:{}/query?a=1", s.port)
    );
    // Followed, it lands on the app.
    let ca = cert.to_str().unwrap();
    let (code, _, body) = curl(&[
        "--cacert",
        ca,
        "-L",
        &format!("http://localhost:{port}/query?a=1"),
    ])
    .unwrap();
    assert_eq!((code, body.as_str()), (200, r#"{"a":"1"}"#));
}

#[test]
fn certificates_reload_on_sighup_and_on_change_and_a_bad_pair_keeps_the_old() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = write_pair(dir.path(), "live");
    let first = dir.path().join("first.crt");
    std::fs::copy(&cert, &first).unwrap();
    let s = Server::fixture("basic", &tls_args(&cert, &key));
    let url = https(&s, "/health");
    let trusts = |ca: &Path| curl(&["--cacert", ca.to_str().unwrap(), &url]).is_ok();
    assert!(trusts(&first));

    // A broken pair: the old certificate stays in service.
    std::fs::write(&cert, "not a certificate").unwrap();
    s.signal(libc::SIGHUP);
    s.wait_for_log("TLS certificate not reloaded");
    assert!(trusts(&first));

    // A new pair and SIGHUP: new handshakes get it.
    let (c2, k2) = write_pair(dir.path(), "second");
    std::fs::copy(&c2, &cert).unwrap();
    std::fs::copy(&k2, &key).unwrap();
    s.signal(libc::SIGHUP);
    s.wait_for_log("TLS certificate reloaded");
    assert!(trusts(&c2) && !trusts(&first));

    // Replaced files alone (a renewal), no signal: picked up within seconds.
    let (c3, k3) = write_pair(dir.path(), "third");
    let staged = (dir.path().join("stage.crt"), dir.path().join("stage.key"));
    std::fs::copy(&c3, &staged.0).unwrap();
    std::fs::copy(&k3, &staged.1).unwrap();
    std::fs::rename(&staged.1, &key).unwrap();
    std::fs::rename(&staged.0, &cert).unwrap();
    s.wait_for_log_count("TLS certificate reloaded", 2);
    assert!(trusts(&c3) && !trusts(&c2));
}

#[test]
fn a_key_that_does_not_match_stops_the_start_naming_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, _) = write_pair(dir.path(), "a");
    let (_, other_key) = write_pair(dir.path(), "b");
    let err = Server::try_start(&fixture("basic"), &tls_args(&cert, &other_key))
        .err()
        .expect("refused");
    assert!(
        err.contains("b.key does not belong to the certificate in") && err.contains("a.crt"),
        "{err}"
    );
}

/// `--acme` against Pebble: the certificate is ordered over TLS-ALPN-01 on
/// the server's own port, served, renewed at two thirds of its lifetime,
/// and taken from the cache after a restart.
#[test]
fn acme_obtains_renews_and_caches_a_certificate_from_pebble() {
    let port = cove_testsvc::free_port();
    // 30 s certificates: renewed after 20 s.
    let Some(pebble) = cove_testsvc::Pebble::start(port, 30) else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().join("acme");
    let (dir, ca, port_s) = (pebble.directory(), pebble.api_ca(), port.to_string());
    let app = fixture("basic");
    let args = [
        "--acme",
        "localhost",
        "--acme-dir",
        &dir,
        "--acme-ca",
        ca.to_str().unwrap(),
        "--acme-cache",
        cache_dir.to_str().unwrap(),
        "--acme-email",
        "ops@example.com",
        "-p",
        &port_s,
        app.to_str().unwrap(),
    ];
    let s = Server::start_args_in(tempfile::tempdir().unwrap(), &args)
        .unwrap_or_else(|log| panic!("cove did not start:\n{log}"));
    s.wait_for_log("ACME: certificate obtained for localhost");
    let root = cache.path().join("pebble-root.pem");
    std::fs::write(&root, pebble.issuing_root()).unwrap();
    let url = format!("https://localhost:{port}/health");
    let get = || curl(&["--cacert", root.to_str().unwrap(), "--http2", &url]);
    let (code, version, _) = get().unwrap();
    assert_eq!((code, version.as_str()), (200, "2"));
    s.wait_for_log_count("ACME: certificate obtained for localhost", 2);
    assert_eq!(get().unwrap().0, 200);
    drop(s);
    let again = Server::start_args_in(tempfile::tempdir().unwrap(), &args)
        .unwrap_or_else(|log| panic!("cove did not restart:\n{log}"));
    again.wait_for_log("ACME: serving the cached certificate for localhost");
}
