//! Signed builds: `cove keygen`, `cove build --sign`, `cove inspect` and
//! `--verify-sig` — a good build starts, a tampered file, a tampered Cove
//! binary, a wrong key, an unsigned build and a manifest that changed are
//! refused, each with a message naming what does not match.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::build::{failed, ok};
use crate::util::{run, run_exe, Exit, Server, TIMEOUT};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// `cove keygen <dir>/<name>`: the paths of NAME.key and NAME.pub, and the
/// fingerprint it printed.
fn keygen(dir: &Path, name: &str) -> (PathBuf, PathBuf, String) {
    let exit = run(&["keygen", s(&dir.join(name))]);
    ok(&exit);
    let fp = exit
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("key fingerprint "))
        .expect("a fingerprint line")
        .to_string();
    (
        dir.join(format!("{name}.key")),
        dir.join(format!("{name}.pub")),
        fp,
    )
}

const APP_LUA: &str = r#"app.manifest({ env = { "GREETING" } })
app.get("/", function(req, res) res:json({ hello = "signed" }) end)
"#;

const APP_JS: &str = r#"import { app } from "hull:app";
app.manifest({ env: ["GREETING"] });
app.get("/", (req, res) => res.json({ hello: "signed" }));
"#;

/// An app directory `<dir>/signed` with a manifest, a static file and a
/// migration, in `ext` (`lua` or `js`).
fn app_dir(dir: &Path, ext: &str) -> PathBuf {
    let app = dir.join("signed");
    std::fs::create_dir_all(app.join("static")).unwrap();
    std::fs::create_dir_all(app.join("migrations")).unwrap();
    let source = if ext == "lua" { APP_LUA } else { APP_JS };
    std::fs::write(app.join(format!("app.{ext}")), source).unwrap();
    std::fs::write(app.join("static/style.css"), "body { color: teal }\n").unwrap();
    std::fs::write(
        app.join("migrations/001_init.sql"),
        "CREATE TABLE notes (id INTEGER PRIMARY KEY);\n",
    )
    .unwrap();
    app
}

/// `cove build [--sign key] -o <dir>/exe app`; the executable.
fn build(app: &Path, dir: &Path, key: Option<&Path>) -> (PathBuf, Exit) {
    let exe = dir.join("exe");
    let mut args = vec!["build", "-o", s(&exe)];
    if let Some(k) = key {
        args.extend(["--sign", s(k)]);
    }
    args.push(s(app));
    let exit = run(&args);
    ok(&exit);
    (exe, exit)
}

/// Where the app archive of a built file starts (from its trailer).
fn archive_start(bytes: &[u8]) -> usize {
    let trailer = std::str::from_utf8(&bytes[bytes.len() - 32..]).unwrap();
    let len: usize = trailer[1..17].parse().unwrap();
    bytes.len() - 32 - len
}

/// Flip the case of the first letter of `needle`, searched in the Cove
/// part (`in_binary`) or the app archive of `exe`.
fn tamper(exe: &Path, needle: &[u8], in_binary: bool) {
    let mut bytes = std::fs::read(exe).unwrap();
    let start = archive_start(&bytes);
    let (from, to) = if in_binary {
        (0, start)
    } else {
        (start, bytes.len())
    };
    let at = bytes[from..to]
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap_or_else(|| panic!("{:?} not found", String::from_utf8_lossy(needle)));
    bytes[from + at] ^= 0x20;
    std::fs::write(exe, bytes).unwrap();
}

/// Start `exe -p 0 -d <tmp db> args…` expecting a refusal: its stderr.
fn refused(exe: &Path, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data.db");
    let mut all = vec!["-p", "0", "-d", s(&db)];
    all.extend(args);
    let exit = run_exe(exe, &all);
    let err = failed(&exit).to_string();
    assert!(!db.exists(), "a refused start created its database");
    err
}

/// `cove inspect --json file [args…]`: the exit code and the object.
fn inspect_json(exe: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["inspect", "--json", s(exe)];
    all.extend(args);
    let exit = run(&all);
    let v = serde_json::from_str(exit.stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", exit.stdout, exit.stderr));
    (exit.code, v)
}

fn problems(v: &Value) -> Vec<String> {
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["part"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn keygen_writes_hex_key_files_private_and_never_overwrites() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, public, fp) = keygen(tmp.path(), "release");
    let secret = std::fs::read_to_string(&key).unwrap();
    let public_text = std::fs::read_to_string(&public).unwrap();
    let is_hex = |t: &str| {
        t.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    };
    assert!(secret.ends_with('\n') && secret.trim().len() == 128 && is_hex(secret.trim()));
    assert!(public_text.ends_with('\n') && public_text.trim().len() == 64);
    // The NaCl secret key ends with its public key, as Hull's does.
    assert_eq!(&secret.trim()[64..], public_text.trim());
    assert_eq!(fp.len(), 16);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let again = run(&["keygen", s(&tmp.path().join("release"))]);
    let err = failed(&again);
    assert!(err.contains("release.key already exists"), "{err}");
    assert!(err.contains("never overwrites"), "{err}");
    assert_eq!(std::fs::read_to_string(&key).unwrap(), secret);
    assert_eq!(std::fs::read_to_string(&public).unwrap(), public_text);
}

fn a_signed_build_starts_and_serves(ext: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let (key, public, fp) = keygen(tmp.path(), "dev");
    let app = app_dir(tmp.path(), ext);
    let (exe, built) = build(&app, tmp.path(), Some(&key));
    assert!(
        built.stdout.contains(&format!("(key {fp})"))
            && built
                .stdout
                .contains("the Cove binary, 3 files and the app's manifest"),
        "{}",
        built.stdout
    );
    std::fs::remove_dir_all(&app).unwrap();

    let server = Server::start_exe(&exe, &["--verify-sig", s(&public)])
        .unwrap_or_else(|log| panic!("{log}"));
    assert!(
        server
            .log()
            .contains(&format!("signature verified: key {fp}")),
        "{}",
        server.log()
    );
    let r = server.get("/");
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["hello"], "signed");
    assert_eq!(
        server.get("/static/style.css").text(),
        "body { color: teal }\n"
    );
}

#[test]
fn a_signed_lua_build_starts_with_its_key_and_serves() {
    a_signed_build_starts_and_serves("lua");
}

#[test]
fn a_signed_js_build_starts_with_its_key_and_serves() {
    a_signed_build_starts_and_serves("js");
}

#[test]
fn a_tampered_packed_file_is_refused_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, public, _) = keygen(tmp.path(), "dev");
    let (exe, _) = build(&app_dir(tmp.path(), "lua"), tmp.path(), Some(&key));
    tamper(&exe, b"teal", false);

    let err = refused(&exe, &["--verify-sig", s(&public)]);
    assert!(err.starts_with("signed: refusing to start"), "{err}");
    assert!(
        err.contains("static/style.css: its contents differ from the signed ones"),
        "{err}"
    );
    assert!(!err.contains("binary"), "only the file differs: {err}");
    // Without --verify-sig nothing is checked: verification is the operator's choice.
    Server::start_exe(&exe, &[]).unwrap_or_else(|log| panic!("{log}"));
}

#[test]
fn a_tampered_cove_binary_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, public, _) = keygen(tmp.path(), "dev");
    let (exe, _) = build(&app_dir(tmp.path(), "lua"), tmp.path(), Some(&key));
    // A message string of Cove's own: the executable still runs.
    tamper(&exe, b"keygen never overwrites", true);

    let err = refused(&exe, &["--verify-sig", s(&public)]);
    assert!(
        err.contains("the Cove binary part differs from the signed one"),
        "{err}"
    );
    assert!(!err.contains("style.css"), "{err}");
}

#[test]
fn a_wrong_key_is_refused_naming_both_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, _, fp) = keygen(tmp.path(), "dev");
    let (_, other, other_fp) = keygen(tmp.path(), "other");
    let (exe, _) = build(&app_dir(tmp.path(), "lua"), tmp.path(), Some(&key));

    let err = refused(&exe, &["--verify-sig", s(&other)]);
    assert!(
        err.contains(&format!(
            "it is signed by key {fp}, not by the key given ({other_fp})"
        )),
        "{err}"
    );
    // The secret key in place of the public one is a mix-up worth naming.
    let err = refused(&exe, &["--verify-sig", s(&key)]);
    assert!(err.contains("this is a secret key"), "{err}");
}

#[test]
fn an_unsigned_build_is_refused_and_the_env_var_asks_too() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, public, _) = keygen(tmp.path(), "dev");
    let (exe, _) = build(&app_dir(tmp.path(), "lua"), tmp.path(), None);

    let err = refused(&exe, &["--verify-sig", s(&public)]);
    assert!(err.contains("this executable is not signed"), "{err}");
    assert!(err.contains("cove build --sign"), "{err}");

    // COVE_VERIFY_SIG: the same check, set once in a service's environment.
    let db = tmp.path().join("env.db");
    let mut child = Command::new(&exe)
        .args(["-p", "0", "-d", s(&db)])
        .env("COVE_VERIFY_SIG", &public)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            panic!("COVE_VERIFY_SIG did not refuse an unsigned build");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("this executable is not signed"), "{err}");
}

#[test]
fn a_manifest_that_differs_from_the_signed_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, public, _) = keygen(tmp.path(), "dev");
    let app = tmp.path().join("fromdb");
    std::fs::create_dir_all(app.join("migrations")).unwrap();
    // The manifest comes from the database: at build time (a fresh
    // database) it says api.example.
    std::fs::write(
        app.join("app.lua"),
        r#"local row = db.query("SELECT host FROM cfg LIMIT 1")[1]
app.manifest({ hosts = { row.host } })
app.get("/", function(req, res) res:text("ok") end)
"#,
    )
    .unwrap();
    std::fs::write(
        app.join("migrations/001_init.sql"),
        "CREATE TABLE IF NOT EXISTS cfg (host TEXT);\n\
         INSERT INTO cfg SELECT 'api.example' WHERE NOT EXISTS (SELECT 1 FROM cfg);\n",
    )
    .unwrap();
    let (exe, _) = build(&app, tmp.path(), Some(&key));
    let (_, v) = inspect_json(&exe, &[]);
    assert_eq!(v["signature"]["manifest"]["hosts"][0], "api.example");

    // A database that says otherwise grants another host: refused.
    let db = tmp.path().join("data.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE cfg (host TEXT); INSERT INTO cfg VALUES ('evil.example');")
        .unwrap();
    drop(conn);
    let exit = run_exe(&exe, &["-p", "0", "-d", s(&db), "--verify-sig", s(&public)]);
    let err = failed(&exit);
    assert!(
        err.contains("the app's manifest does not match its signature")
            && err.contains("evil.example")
            && err.contains("api.example"),
        "{err}"
    );
}

#[test]
fn plain_cove_refuses_verify_sig_for_an_app_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, public, _) = keygen(tmp.path(), "dev");
    let app = app_dir(tmp.path(), "lua");
    let db = tmp.path().join("data.db");
    for cmd in [&[][..], &["dev"][..]] {
        let mut args = cmd.to_vec();
        args.extend(["-p", "0", "-d", s(&db), "--verify-sig", s(&public), s(&app)]);
        let err = failed(&run(&args)).to_string();
        assert!(
            err.contains("carry no signature") && err.contains("cove build --sign"),
            "{err}"
        );
        assert!(!err.contains("  "), "one line, single spaces: {err}");
    }
    assert!(!db.exists());
}

#[test]
fn build_sign_refuses_a_public_or_missing_key_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, public, _) = keygen(tmp.path(), "dev");
    let app = app_dir(tmp.path(), "lua");
    let exe = tmp.path().join("exe");
    let err = failed(&run(&[
        "build",
        "--sign",
        s(&public),
        "-o",
        s(&exe),
        s(&app),
    ]))
    .to_string();
    assert!(err.contains("this is a public key"), "{err}");
    let missing = tmp.path().join("nope.key");
    let err = failed(&run(&["build", "--sign", s(&missing), s(&app)])).to_string();
    assert!(
        err.contains("nope.key") && err.contains("cove keygen"),
        "{err}"
    );
    // An app that cannot load cannot have its manifest recorded.
    std::fs::write(app.join("app.lua"), "app.get(\n").unwrap();
    let (key, _, _) = keygen(tmp.path(), "k2");
    let err = failed(&run(&["build", "--sign", s(&key), "-o", s(&exe), s(&app)])).to_string();
    assert!(
        err.contains("cannot sign") && err.contains("app.lua"),
        "{err}"
    );
    assert!(!exe.exists());
}

#[test]
fn inspect_shows_the_signer_files_and_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, public, fp) = keygen(tmp.path(), "dev");
    let (_, other, _) = keygen(tmp.path(), "other");
    let (exe, _) = build(&app_dir(tmp.path(), "lua"), tmp.path(), Some(&key));

    let text = run(&["inspect", s(&exe)]);
    ok(&text);
    let out = &text.stdout;
    assert!(
        out.starts_with("signed: built by cove build into "),
        "{out}"
    );
    assert!(
        out.contains(&format!("yes, by key {fp} (public key ")),
        "{out}"
    );
    assert!(out.contains(r#"{"env":["GREETING"]}"#), "{out}");
    assert!(out.contains("OK: the Cove binary, the app name and every file are as signed"));
    assert!(out.contains("  static/style.css\n"), "{out}");

    let (code, v) = inspect_json(&exe, &["--key", s(&public)]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["app"], "signed");
    assert_eq!(v["signed"], true);
    assert_eq!(v["ok"], true);
    assert_eq!(v["signature"]["fingerprint"], fp.as_str());
    let pk = std::fs::read_to_string(&public).unwrap();
    assert_eq!(v["signature"]["public_key"], pk.trim());
    let paths: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["app.lua", "migrations/001_init.sql", "static/style.css"]
    );
    assert_eq!(
        v["binary"]["size"].as_u64(),
        Some(archive_start(&std::fs::read(&exe).unwrap()) as u64)
    );

    let (code, v) = inspect_json(&exe, &["--key", s(&other)]);
    assert_eq!((code, problems(&v)), (Some(1), vec!["key".to_string()]));
}

#[test]
fn inspect_names_every_tampered_part_and_unsigned_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let (key, public, _) = keygen(tmp.path(), "dev");
    let app = app_dir(tmp.path(), "lua");
    let (exe, _) = build(&app, tmp.path(), Some(&key));
    tamper(&exe, b"teal", false);
    tamper(&exe, b"keygen never overwrites", true);
    let (code, v) = inspect_json(&exe, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(v["ok"], false);
    assert_eq!(problems(&v), ["binary", "file"]);
    assert_eq!(v["problems"][1]["path"], "static/style.css");
    let text = run(&["inspect", s(&exe)]);
    assert_eq!(text.code, Some(1));
    assert!(
        text.stdout
            .contains("FAILED, 2 problems; --verify-sig would refuse to start it"),
        "{}",
        text.stdout
    );

    let unsigned_dir = tmp.path().join("unsigned");
    std::fs::create_dir(&unsigned_dir).unwrap();
    let (plain, _) = build(&app, &unsigned_dir, None);
    let (code, v) = inspect_json(&plain, &[]);
    assert_eq!(
        (code, &v["signed"], &v["signature"]),
        (Some(0), &Value::Bool(false), &Value::Null)
    );
    let (code, v) = inspect_json(&plain, &["--key", s(&public)]);
    assert_eq!(
        (code, problems(&v)),
        (Some(1), vec!["unsigned".to_string()])
    );

    let (code, v) = inspect_json(&app, &[]);
    assert_eq!(code, Some(1));
    assert!(
        v["error"].as_str().unwrap().contains("is a directory"),
        "{v}"
    );
}

#[test]
fn the_signature_checks_out_with_a_tar_reader_and_ed25519_alone() {
    use ed25519_dalek::{Signature, Verifier, VerifyingKey};
    use sha2::{Digest, Sha256};
    use std::io::Read;

    let tmp = tempfile::tempdir().unwrap();
    let (key, public, _) = keygen(tmp.path(), "dev");
    let (exe, _) = build(&app_dir(tmp.path(), "lua"), tmp.path(), Some(&key));
    let bytes = std::fs::read(&exe).unwrap();
    let start = archive_start(&bytes);
    let mut entries = std::collections::BTreeMap::new();
    let mut archive = tar::Archive::new(&bytes[start..bytes.len() - 32]);
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        entries.insert(path, data);
    }
    // Ed25519 over the exact bytes of the statement, by the .pub key.
    let statement = &entries[".cove/signed.json"];
    let envelope: Value = serde_json::from_slice(&entries[".cove/signature.json"]).unwrap();
    assert_eq!(envelope["algorithm"], "ed25519");
    let pk_hex = std::fs::read_to_string(&public).unwrap();
    let pk: [u8; 32] = hex::decode(pk_hex.trim()).unwrap().try_into().unwrap();
    let sig: [u8; 64] = hex::decode(envelope["signature"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    VerifyingKey::from_bytes(&pk)
        .unwrap()
        .verify(statement, &Signature::from_bytes(&sig))
        .expect("the statement verifies with the public key file");

    // The statement's hashes are plain SHA-256 of what the file holds.
    let st: Value = serde_json::from_slice(statement).unwrap();
    let sha = |b: &[u8]| hex::encode(Sha256::digest(b));
    assert_eq!(st["format"], "cove-signed-build/1");
    assert_eq!(st["app"], "signed");
    assert_eq!(st["binary"]["size"].as_u64(), Some(start as u64));
    assert_eq!(st["binary"]["sha256"], sha(&bytes[..start]).as_str());
    assert_eq!(st["manifest"], serde_json::json!({"env": ["GREETING"]}));
    let files = st["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    for f in files {
        let path = f["path"].as_str().unwrap();
        assert_eq!(f["sha256"], sha(&entries[path]).as_str(), "{path}");
        assert_eq!(f["size"].as_u64(), Some(entries[path].len() as u64));
    }
}
