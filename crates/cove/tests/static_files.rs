//! Static files (`static/` at `/static/*`): content types, validators and
//! 304s, ranges, gzip/brotli (on the fly and precompressed), HEAD,
//! traversal refusals, the order with middleware and routes, streaming of
//! large files, and a built executable serving its packed files.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::util::{build_request, run, Conn, Response, Server, TIMEOUT};

/// A copy of `tests/fixtures/static` the test can add files to.
fn app_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/static");
    copy_dir(&from, dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn write(dir: &Path, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

fn set_mtime(path: &Path, t: SystemTime) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(t).unwrap();
}

fn start(dir: &Path) -> Server {
    Server::start(&dir.join("app.lua"), &["--workers", "1"])
}

fn get(conn: &mut Conn, path: &str, headers: &[(&str, &str)]) -> Response {
    conn.request("GET", path, headers, None)
}

fn file(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .arg("-dc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip");
    let mut stdin = child.stdin.take().unwrap();
    let input = bytes.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(out.status.success(), "not gzip data");
    out.stdout
}

#[test]
fn content_types_follow_hulls_table_then_guess() {
    let app = app_copy();
    let hull = [
        ("html", "text/html; charset=utf-8"),
        ("css", "text/css"),
        ("js", "application/javascript"),
        ("json", "application/json"),
        ("txt", "text/plain; charset=utf-8"),
        ("xml", "application/xml"),
        ("svg", "image/svg+xml"),
        ("png", "image/png"),
        ("jpg", "image/jpeg"),
        ("jpeg", "image/jpeg"),
        ("gif", "image/gif"),
        ("webp", "image/webp"),
        ("ico", "image/x-icon"),
        ("woff", "font/woff"),
        ("woff2", "font/woff2"),
        ("ttf", "font/ttf"),
        ("pdf", "application/pdf"),
        ("mp4", "video/mp4"),
        ("webm", "video/webm"),
        ("map", "application/json"),
    ];
    let others = [
        ("PNG", "image/png"),
        ("wasm", "application/wasm"),
        ("unknownext", "application/octet-stream"),
    ];
    for (ext, _) in hull.iter().chain(&others) {
        write(app.path(), &format!("static/types/f.{ext}"), "x");
    }
    write(app.path(), "static/types/noext", "x");
    let s = start(app.path());
    let mut c = s.conn();
    for (ext, want) in hull.iter().chain(&others) {
        let r = get(&mut c, &format!("/static/types/f.{ext}"), &[]);
        assert_eq!(r.status, 200, ".{ext}");
        assert_eq!(r.header("content-type"), Some(*want), ".{ext}");
        assert_eq!(r.header_all("content-type").len(), 1);
        assert_eq!(r.body, b"x");
    }
    let r = get(&mut c, "/static/types/noext", &[]);
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    // A name with a space, percent-encoded in the request.
    write(app.path(), "static/sub dir/my file.css", "a{}");
    let r = get(&mut c, "/static/sub%20dir/my%20file.css", &[]);
    assert_eq!((r.status, r.text().as_str()), (200, "a{}"));
}

#[test]
fn etag_and_if_none_match_give_304() {
    let app = app_copy();
    let s = start(app.path());
    let mut c = s.conn();
    let r = get(&mut c, "/static/style.css", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, file(app.path(), "static/style.css"));
    assert_eq!(
        r.header("cache-control"),
        Some("no-cache"),
        "Hull's, on disk"
    );
    assert!(r.header("content-security-policy").is_none());
    let etag = r.header("etag").expect("etag").to_string();
    assert!(etag.starts_with("W/\"") && etag.ends_with('"'), "{etag}");
    let strong = etag.trim_start_matches("W/").to_string();

    for inm in [
        etag.clone(),
        strong.clone(),
        "*".to_string(),
        format!("\"other\", {etag}"),
        format!("\"a,b\",{strong}"),
    ] {
        let r = get(&mut c, "/static/style.css", &[("If-None-Match", &inm)]);
        assert_eq!(r.status, 304, "If-None-Match: {inm}");
        assert!(r.body.is_empty());
        assert_eq!(r.header("etag"), Some(etag.as_str()));
        assert_eq!(r.header("cache-control"), Some("no-cache"));
    }
    let r = get(
        &mut c,
        "/static/style.css",
        &[("If-None-Match", "\"other\"")],
    );
    assert_eq!(r.status, 200);

    // An edit (same size, same second) changes the ETag.
    let path = app.path().join("static/style.css");
    let mut text = std::fs::read(&path).unwrap();
    text[0] = b' ';
    std::fs::write(&path, &text).unwrap();
    let r = get(&mut c, "/static/style.css", &[("If-None-Match", &etag)]);
    assert_eq!(r.status, 200, "the edited file is sent again");
    assert_eq!(r.body, text);
    assert_ne!(r.header("etag"), Some(etag.as_str()));
}

#[test]
fn last_modified_and_if_modified_since() {
    let app = app_copy();
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    set_mtime(&app.path().join("static/style.css"), when);
    let s = start(app.path());
    let mut c = s.conn();
    let r = get(&mut c, "/static/style.css", &[]);
    let date = "Tue, 14 Nov 2023 22:13:20 GMT";
    assert_eq!(r.header("last-modified"), Some(date));
    let r = get(&mut c, "/static/style.css", &[("If-Modified-Since", date)]);
    assert_eq!((r.status, r.body.len()), (304, 0));
    assert_eq!(r.header("last-modified"), Some(date));
    let later = "Wed, 15 Nov 2023 00:00:00 GMT";
    let r = get(&mut c, "/static/style.css", &[("If-Modified-Since", later)]);
    assert_eq!(r.status, 304);
    let earlier = "Tue, 14 Nov 2023 22:13:19 GMT";
    let r = get(
        &mut c,
        "/static/style.css",
        &[("If-Modified-Since", earlier)],
    );
    assert_eq!(r.status, 200);
    let r = get(
        &mut c,
        "/static/style.css",
        &[("If-Modified-Since", "yesterday")],
    );
    assert_eq!(r.status, 200);
    // If-None-Match wins over If-Modified-Since.
    let headers = [("If-None-Match", "\"nope\""), ("If-Modified-Since", date)];
    assert_eq!(get(&mut c, "/static/style.css", &headers).status, 200);
}

#[test]
fn range_requests() {
    let app = app_copy();
    let data: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let path = write(app.path(), "static/letters.txt", &data);
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    set_mtime(&path, when);
    let s = start(app.path());
    let mut c = s.conn();
    let part = |c: &mut Conn, range: &str| get(c, "/static/letters.txt", &[("Range", range)]);

    let r = part(&mut c, "bytes=0-9");
    assert_eq!(r.status, 206);
    assert_eq!(r.header("content-range"), Some("bytes 0-9/1000"));
    assert_eq!(r.header("content-length"), Some("10"));
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(r.body, &data[..10]);
    let r = part(&mut c, "bytes=990-");
    assert_eq!(
        (r.status, r.header("content-range")),
        (206, Some("bytes 990-999/1000"))
    );
    assert_eq!(r.body, &data[990..]);
    let r = part(&mut c, "bytes=-5");
    assert_eq!(r.header("content-range"), Some("bytes 995-999/1000"));
    assert_eq!(r.body, &data[995..]);
    let r = part(&mut c, "bytes=500-5000");
    assert_eq!(r.header("content-range"), Some("bytes 500-999/1000"));

    for bad in ["bytes=1000-", "bytes=5000-6000", "bytes=-0"] {
        let r = part(&mut c, bad);
        assert_eq!(r.status, 416, "{bad}");
        assert_eq!(r.header("content-range"), Some("bytes */1000"));
        assert!(r.body.is_empty());
    }
    // Several ranges, or a malformed one: the whole file.
    for whole in ["bytes=0-1,5-6", "bytes=abc", "lines=1-2"] {
        let r = part(&mut c, whole);
        assert_eq!((r.status, r.body.len()), (200, 1000), "{whole}");
        assert!(r.header("content-range").is_none());
    }
    // Never compressed, even when the client accepts it.
    let headers = [("Range", "bytes=0-299"), ("Accept-Encoding", "gzip, br")];
    let r = get(&mut c, "/static/letters.txt", &headers);
    assert_eq!(r.status, 206);
    assert!(r.header("content-encoding").is_none());
    assert_eq!(r.body, &data[..300]);
    // If-Range: the range only if the file is still the one the client has.
    let same = "Tue, 14 Nov 2023 22:13:20 GMT";
    let older = "Mon, 13 Nov 2023 00:00:00 GMT";
    let r = get(
        &mut c,
        "/static/letters.txt",
        &[("Range", "bytes=0-0"), ("If-Range", same)],
    );
    assert_eq!(r.status, 206);
    let r = get(
        &mut c,
        "/static/letters.txt",
        &[("Range", "bytes=0-0"), ("If-Range", older)],
    );
    assert_eq!((r.status, r.body.len()), (200, 1000));
    let r = get(&mut c, "/static/letters.txt", &[]);
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
}

#[test]
fn gzip_and_brotli_are_negotiated() {
    let app = app_copy();
    write(app.path(), "static/img.png", vec![7u8; 4000]);
    let s = start(app.path());
    let mut c = s.conn();
    let original = file(app.path(), "static/style.css");
    let plain = get(&mut c, "/static/style.css", &[]);
    assert_eq!(plain.body, original);
    assert!(plain.header("content-encoding").is_none());
    assert!(plain.header_all("vary").contains(&"Accept-Encoding"));
    let etag = plain.header("etag").unwrap().to_string();

    let gz = get(
        &mut c,
        "/static/style.css",
        &[("Accept-Encoding", "gzip, deflate")],
    );
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(gz.header("content-type"), Some("text/css"));
    assert!(
        gz.body.len() < original.len() / 2,
        "{} bytes",
        gz.body.len()
    );
    assert_eq!(gunzip(&gz.body), original);
    assert_eq!(gz.header("etag"), Some(etag.as_str()));
    assert!(gz.header_all("vary").contains(&"Accept-Encoding"));
    assert!(gz.header("accept-ranges").is_none());

    let br = get(
        &mut c,
        "/static/style.css",
        &[("Accept-Encoding", "gzip, deflate, br")],
    );
    assert_eq!(br.header("content-encoding"), Some("br"));
    assert!(br.body.len() < gz.body.len(), "brotli beats gzip on CSS");
    // Served again from the worker's cache: the same bytes.
    let again = get(&mut c, "/static/style.css", &[("Accept-Encoding", "br")]);
    assert_eq!(again.body, br.body);

    let cases = [
        ("br;q=0, gzip", Some("gzip")),
        ("br;q=0.5, gzip;q=0.8", Some("gzip")),
        ("gzip;q=0", None),
        ("identity", None),
        ("*;q=0.5", Some("br")),
        ("*, br;q=0", Some("gzip")),
    ];
    for (accept, want) in cases {
        let r = get(&mut c, "/static/style.css", &[("Accept-Encoding", accept)]);
        assert_eq!(
            r.header("content-encoding"),
            want,
            "Accept-Encoding: {accept}"
        );
        if want.is_none() {
            assert_eq!(r.body, original);
        }
    }
    // Too small to gain, or not compressible: sent as is.
    let r = get(
        &mut c,
        "/static/tiny.css",
        &[("Accept-Encoding", "gzip, br")],
    );
    assert!(r.header("content-encoding").is_none());
    assert_eq!(r.body, file(app.path(), "static/tiny.css"));
    let r = get(
        &mut c,
        "/static/img.png",
        &[("Accept-Encoding", "gzip, br")],
    );
    assert!(r.header("content-encoding").is_none());
    assert_eq!(r.body.len(), 4000);
    assert!(!r.header_all("vary").contains(&"Accept-Encoding"));
}

#[test]
fn precompressed_siblings_are_sent_as_they_are() {
    let app = app_copy();
    let css = "h1 { color: red; }\n".repeat(50);
    write(app.path(), "static/pre.css", &css);
    // Marker bytes, not real compressed data: the test shows the sibling's
    // bytes are what goes out, untouched.
    let br = write(app.path(), "static/pre.css.br", "BROTLI SIBLING");
    write(app.path(), "static/pre.css.gz", "GZIP SIBLING");
    write(app.path(), "static/old.css", &css);
    let stale = write(app.path(), "static/old.css.gz", "STALE GZIP");
    set_mtime(&stale, SystemTime::now() - Duration::from_secs(3600));
    let s = start(app.path());
    let mut c = s.conn();
    let r = get(
        &mut c,
        "/static/pre.css",
        &[("Accept-Encoding", "gzip, br")],
    );
    assert_eq!(r.text(), "BROTLI SIBLING");
    assert_eq!(r.header("content-encoding"), Some("br"));
    assert_eq!(r.header("content-type"), Some("text/css"));
    assert!(r.header_all("vary").contains(&"Accept-Encoding"));
    let r = get(&mut c, "/static/pre.css", &[("Accept-Encoding", "gzip")]);
    assert_eq!(r.text(), "GZIP SIBLING");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let r = get(
        &mut c,
        "/static/pre.css",
        &[("Accept-Encoding", "br;q=0.1, gzip")],
    );
    assert_eq!(r.text(), "GZIP SIBLING");
    let r = get(&mut c, "/static/pre.css", &[]);
    assert_eq!(r.text(), css);
    // A sibling older than its file is stale: compressed on the fly instead.
    let r = get(&mut c, "/static/old.css", &[("Accept-Encoding", "gzip")]);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&r.body), css.as_bytes());
    // The sibling itself is a file like any other.
    let r = get(&mut c, "/static/pre.css.br", &[]);
    assert_eq!(r.text(), "BROTLI SIBLING");
    assert!(r.header("content-encoding").is_none());
    drop(br);
}

#[test]
fn head_has_the_headers_and_no_body() {
    let app = app_copy();
    let s = start(app.path());
    let mut c = s.conn();
    let len = file(app.path(), "static/style.css").len().to_string();
    let r = c.request("HEAD", "/static/style.css", &[], None);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length"), Some(len.as_str()));
    assert_eq!(r.header("content-type"), Some("text/css"));
    assert!(r.header("etag").is_some());
    let gz = get(&mut c, "/static/style.css", &[("Accept-Encoding", "gzip")]);
    let r = c.request(
        "HEAD",
        "/static/style.css",
        &[("Accept-Encoding", "gzip")],
        None,
    );
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(
        r.header("content-length"),
        Some(gz.body.len().to_string().as_str())
    );
    let etag = r.header("etag").unwrap().to_string();
    let r = c.request(
        "HEAD",
        "/static/style.css",
        &[("If-None-Match", &etag)],
        None,
    );
    assert_eq!(r.status, 304);
    // Nothing of a body was sent: the connection still reads in step.
    let r = get(&mut c, "/health", &[]);
    assert_eq!((r.status, r.text().as_str()), (200, r#"{"ok":true}"#));
}

#[test]
fn traversal_is_refused() {
    let app = app_copy();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "outside secret");
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        app.path().join("static/out.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), app.path().join("static/outdir")).unwrap();
    std::os::unix::fs::symlink(
        app.path().join("app.lua"),
        app.path().join("static/app.lua"),
    )
    .unwrap();
    write(app.path(), "static/.hidden", "dot file");
    write(app.path(), "static/sub/ok.txt", "ok");
    let s = start(app.path());
    let mut c = s.conn();
    assert_eq!(get(&mut c, "/static/sub/ok.txt", &[]).text(), "ok");
    for path in [
        "/static/../app.lua",
        "/static/sub/../../app.lua",
        "/static/%2e%2e/app.lua",
        "/static/%2E%2E/%2E%2E/etc/passwd",
        "/static/.%2e/app.lua",
        "/static/..%2fapp.lua",
        "/static/sub%2f..%2f..%2fapp.lua",
        "/static/%2fetc%2fpasswd",
        "/static//etc/passwd",
        "/static/..%5capp.lua",
        "/static/..\\app.lua",
        "/static/sub%00.txt",
        "/static/sub/ok.txt%00",
        "/static/.hidden",
        "/static/out.txt",
        "/static/outdir/secret.txt",
        "/static/app.lua",
        "/static/sub",
        "/static/sub/",
        "/static/",
    ] {
        let r = get(&mut c, path, &[]);
        assert_eq!((r.status, r.text().as_str()), (404, "Not Found"), "{path}");
    }
}

#[test]
fn routes_answer_only_for_missing_files() {
    let app = app_copy();
    let s = start(app.path());
    let mut c = s.conn();
    let r = get(&mut c, "/static/missing.txt", &[]);
    assert_eq!((r.status, r.text().as_str()), (200, "from the route"));
    let r = get(&mut c, "/static/style.css", &[]);
    assert_eq!(r.body, file(app.path(), "static/style.css"));
    // Only GET and HEAD read files; other methods are routed.
    let r = c.request("POST", "/static/style.css", &[], Some(b"x"));
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET"));
    // A file that appears later is served (no restart).
    write(app.path(), "static/missing.txt", "now a file");
    let r = get(&mut c, "/static/missing.txt", &[]);
    assert_eq!(r.text(), "now a file");
}

#[test]
fn middleware_runs_before_static_files() {
    let app = app_copy();
    write(app.path(), "static/private/secret.txt", "secret");
    write(app.path(), "static/long/app.css", "a{}");
    let s = start(app.path());
    let mut c = s.conn();
    let r = get(&mut c, "/static/index.html", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(r.header("x-seen-by"), Some("middleware"));
    assert_eq!(r.header_all("vary"), vec!["Accept-Encoding", "Origin"]);
    assert!(r.header("x-post").is_none(), "post-body middleware ran");
    assert!(r.header("content-security-policy").is_none());
    assert_eq!(r.header_all("content-type").len(), 1);
    let r = get(&mut c, "/static/private/secret.txt", &[]);
    assert_eq!((r.status, r.text().as_str()), (403, "no entry"));
    let r = get(&mut c, "/static/long/app.css", &[]);
    assert_eq!(
        r.header_all("cache-control"),
        vec!["public, max-age=31536000, immutable"]
    );
    // A 304 carries them too.
    let etag = r.header("etag").unwrap().to_string();
    let r = get(&mut c, "/static/long/app.css", &[("If-None-Match", &etag)]);
    assert_eq!(r.status, 304);
    assert_eq!(r.header("x-seen-by"), Some("middleware"));
}

/// `/proc/<pid>` of the server whose database is `db` (its command line
/// names it).
fn server_pid(db: &Path) -> u32 {
    let needle = db.to_str().unwrap();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) {
            return pid;
        }
    }
    panic!("no process serves {needle}");
}

/// A `/proc/<pid>/status` field in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("no {field}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_large_file_streams_while_the_worker_answers_others() {
    const SIZE: usize = 20 * 1024 * 1024;
    let app = app_copy();
    let data: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    write(app.path(), "static/big.bin", &data);
    let s = start(app.path());
    assert_eq!(s.get("/health").status, 200);
    let pid = server_pid(s.db_path());
    let rss_before = status_kib(pid, "VmRSS:");

    let mut big = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    big.set_read_timeout(Some(TIMEOUT)).unwrap();
    let close = [("Connection", "close")];
    big.write_all(&build_request("GET", "/static/big.bin", &close, None))
        .unwrap();
    let mut got = vec![0u8; 64 * 1024];
    big.read_exact(&mut got).unwrap();
    let head_end = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&got[..head_end]).to_lowercase();
    assert!(head.contains(&format!("content-length: {SIZE}")), "{head}");
    // The download is stalled (the client reads nothing), yet the same
    // single worker answers at once.
    let t = Instant::now();
    let r = s.get("/health");
    assert_eq!(r.status, 200);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());

    let mut body = got.split_off(head_end);
    big.read_to_end(&mut body).unwrap();
    assert_eq!(body.len(), SIZE);
    assert!(body == data, "the bytes differ");
    // Streamed: the server never held the file (20 MiB) in memory.
    let peak = status_kib(pid, "VmHWM:");
    assert!(
        peak < rss_before + 10 * 1024,
        "peak {peak} KiB, before {rss_before} KiB"
    );
}

#[test]
fn dev_mode_serves_edits_at_once() {
    let app = app_copy();
    let s = Server::start(&app.path().join("app.lua"), &["dev"]);
    let r = s.get("/static/tiny.css");
    assert_eq!(r.body, file(app.path(), "static/tiny.css"));
    write(app.path(), "static/tiny.css", "p { margin: 1px }\n");
    assert_eq!(s.get("/static/tiny.css").text(), "p { margin: 1px }\n");
}

#[test]
fn a_javascript_app_serves_static_files_too() {
    let app = app_copy();
    std::fs::remove_file(app.path().join("app.lua")).unwrap();
    write(
        app.path(),
        "app.js",
        r#"import { app } from "hull:app";
app.get("/health", (req, res) => res.json({ ok: true }));
"#,
    );
    let s = Server::start(&app.path().join("app.js"), &["--workers", "1"]);
    let r = s.get("/static/style.css");
    assert_eq!(r.body, file(app.path(), "static/style.css"));
    assert_eq!(r.header("content-type"), Some("text/css"));
    assert_eq!(s.get("/static/nope.css").status, 404);
}

#[test]
fn a_built_executable_serves_its_packed_static_files() {
    let app = app_copy();
    let letters: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
    write(app.path(), "static/letters.txt", &letters);
    write(
        app.path(),
        "static/pre.css",
        "h1 { color: red; }\n".repeat(50),
    );
    write(app.path(), "static/pre.css.br", "BROTLI SIBLING");
    let bin = tempfile::tempdir().unwrap();
    let exe = bin.path().join("site");
    let built = run(&[
        "build",
        "-o",
        exe.to_str().unwrap(),
        app.path().to_str().unwrap(),
    ]);
    assert_eq!(built.code, Some(0), "{}", built.stderr);
    let style = file(app.path(), "static/style.css");
    drop(app);

    let s = Server::start_exe(&exe, &["--workers", "1"]).unwrap_or_else(|log| panic!("{log}"));
    let mut c = s.conn();
    let r = get(&mut c, "/static/style.css", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, style);
    assert_eq!(r.header("cache-control"), Some("public, max-age=86400"));
    assert!(r.header("last-modified").is_none(), "a pack keeps no times");
    let etag = r.header("etag").unwrap().to_string();
    assert_eq!(etag.len(), "W/\"\"".len() + 16, "a content hash: {etag}");
    let r = get(&mut c, "/static/style.css", &[("If-None-Match", &etag)]);
    assert_eq!(r.status, 304);
    let r = get(&mut c, "/static/style.css", &[("Accept-Encoding", "gzip")]);
    assert_eq!(gunzip(&r.body), style);
    let r = get(&mut c, "/static/pre.css", &[("Accept-Encoding", "br")]);
    assert_eq!(r.text(), "BROTLI SIBLING");
    let r = get(&mut c, "/static/letters.txt", &[("Range", "bytes=-3")]);
    assert_eq!((r.status, r.body.as_slice()), (206, &letters[997..]));
    let r = c.request("HEAD", "/static/letters.txt", &[], None);
    assert_eq!(r.header("content-length"), Some("1000"));
    let r = get(&mut c, "/static/missing.txt", &[]);
    assert_eq!(r.text(), "from the route");
    for path in [
        "/static/../app.lua",
        "/static/%2e%2e/app.lua",
        "/static/app.lua",
    ] {
        assert_eq!(get(&mut c, path, &[]).status, 404, "{path}");
    }
    // Another process of the same build gives the same ETag.
    let again = Server::start_exe(&exe, &["--workers", "1"]).unwrap_or_else(|log| panic!("{log}"));
    let r = again.get("/static/style.css");
    assert_eq!(r.header("etag"), Some(etag.as_str()));
}
