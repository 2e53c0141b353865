//! The kernel sandbox (issue 38): once the app has loaded, the server
//! reads only its app (or executable), the manifest's `fs.read` and, with
//! `hosts`, the CA roots; writes only its database and `fs.write`; opens
//! no TCP port it does not need; never execs or forks. Each check makes the
//! server try the forbidden thing itself (hidden `--sandbox-probe`, run on
//! the first worker and on the main thread right after they enter the
//! sandbox) and compares the kernel's answers with `--no-sandbox`, so a
//! sandbox that silently did nothing fails here.
//! (tests/sandbox.rs is the *script* sandbox: no io/os in Lua.)

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::util::{both, run, Lang, Server};

/// The threads the probe runs on.
const THREADS: [&str; 2] = ["cove-worker-0", "main"];

/// A scratch area: the app directory and paths outside it.
struct Area {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Area {
    fn new() -> Area {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("app")).unwrap();
        std::fs::create_dir_all(root.join("readable")).unwrap();
        std::fs::create_dir_all(root.join("writable")).unwrap();
        std::fs::write(root.join("readable/ref.txt"), "ref").unwrap();
        std::fs::write(root.join("secret.txt"), "secret").unwrap();
        Area { _tmp: tmp, root }
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).to_str().unwrap().to_string()
    }

    /// An app of `lang` with `manifest` (Lua table syntax for Lua, object
    /// syntax for JS) and one route.
    fn app(&self, lang: Lang, manifest: &str) -> PathBuf {
        let src = match lang {
            Lang::Lua => format!(
                "app.manifest({manifest})\napp.get(\"/\", function(req, res) res:text(\"up\") end)\n"
            ),
            Lang::Js => format!(
                "import {{ app }} from \"hull:app\";\napp.manifest({manifest});\napp.get(\"/\", (req, res) => res.text(\"up\"));\n"
            ),
        };
        let file = self.root.join("app").join(format!("app.{}", lang.ext()));
        std::fs::write(&file, src).unwrap();
        file
    }

    /// `fs.read` = readable/ref.txt and a path that does not exist,
    /// `fs.write` = writable/.
    fn fs_manifest(&self, lang: Lang) -> String {
        let (read, missing, write) = (
            self.path("readable/ref.txt"),
            self.path("missing"),
            self.path("writable"),
        );
        match lang {
            Lang::Lua => {
                format!(
                    "{{ fs = {{ read = {{ {read:?}, {missing:?} }}, write = {{ {write:?} }} }} }}"
                )
            }
            Lang::Js => {
                format!("{{ fs: {{ read: [{read:?}, {missing:?}], write: [{write:?}] }} }}")
            }
        }
    }
}

/// `--sandbox-probe` flags for `ops`.
fn probes(ops: &[String]) -> Vec<String> {
    ops.iter()
        .flat_map(|op| ["--sandbox-probe".to_string(), op.clone()])
        .collect()
}

/// What the probe printed: (thread, op) → `allowed`, `denied` or `failed`.
fn outcomes(log: &str) -> BTreeMap<(String, String), String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("sandbox-probe "))
        .filter_map(|l| {
            let (who, rest) = l.split_once(' ')?;
            let (op, outcome) = rest.rsplit_once(": ")?;
            let word = outcome.split(' ').next()?;
            Some(((who.to_string(), op.to_string()), word.to_string()))
        })
        .collect()
}

fn start(app: &Path, ops: &[String], extra: &[&str], envs: &[(&str, &str)]) -> Server {
    let mut args: Vec<&str> = extra.to_vec();
    let probe = probes(ops);
    args.extend(probe.iter().map(String::as_str));
    Server::start_with_env(app, &args, envs)
}

/// Every op got `want` on every probed thread.
fn assert_all(server: &Server, ops: &[String], want: &str) {
    let got = outcomes(&server.log());
    for who in THREADS {
        for op in ops {
            let key = (who.to_string(), op.clone());
            assert_eq!(
                got.get(&key).map(String::as_str),
                Some(want),
                "{who} {op}\n{}",
                server.log()
            );
        }
    }
}

fn listener() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    (l, addr)
}

both!(files_ports_and_processes_beyond_the_app_are_denied);

fn files_ports_and_processes_beyond_the_app_are_denied(lang: Lang) {
    let area = Area::new();
    let app = area.app(lang, &area.fs_manifest(lang));
    let (_open, addr) = listener();
    let forbidden = vec![
        format!("read={}", area.path("secret.txt")),
        format!("write={}", area.path("created.txt")),
        "spawn=/bin/true".to_string(),
        format!("connect={addr}"),
        "bind=127.0.0.1:0".to_string(),
        "udp".to_string(),
    ];
    let declared = vec![
        format!("read={}", area.path("app/app.") + lang.ext()),
        format!("read={}", area.path("readable/ref.txt")),
        format!("write={}", area.path("writable/out.txt")),
    ];
    let all: Vec<String> = forbidden.iter().chain(&declared).cloned().collect();

    let sandboxed = start(&app, &all, &[], &[]);
    assert_all(&sandboxed, &forbidden, "denied");
    assert_all(&sandboxed, &declared, "allowed");
    assert_eq!(sandboxed.get("/").text(), "up");
    assert!(!area.root.join("created.txt").exists());
    let log = sandboxed.log();
    assert!(
        log.contains(&format!(
            "{} (in the manifest's fs lists) does not exist",
            area.path("missing")
        )),
        "{log}"
    );

    let open = start(&app, &all, &["--no-sandbox"], &[]);
    assert_all(&open, &all, "allowed");
    assert!(open
        .log()
        .contains("kernel sandbox disabled (--no-sandbox)"));
    assert!(area.root.join("created.txt").exists());
}

#[test]
fn exec_is_denied_and_without_the_sandbox_replaces_the_server() {
    let area = Area::new();
    let app = area.app(Lang::Lua, "{}");
    let script = area.root.join("exec.sh");
    std::fs::write(&script, "#!/bin/sh\necho exec-ran >&2\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ops = vec![format!("exec={}", script.display())];

    let sandboxed = start(&app, &ops, &[], &[]);
    assert_all(&sandboxed, &ops, "denied");
    assert!(!sandboxed.log().contains("exec-ran"));

    let mut args = vec!["--no-sandbox".to_string()];
    args.extend(probes(&ops));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let replaced = Server::try_start(&app, &args)
        .err()
        .expect("exec replaced the server");
    assert!(replaced.contains("exec-ran"), "{replaced}");
}

#[test]
fn hosts_open_tcp_to_any_port_dns_and_the_ca_roots() {
    let area = Area::new();
    let ca = area.path("ca.pem");
    std::fs::write(&ca, "not a real bundle").unwrap();
    let env = [("SSL_CERT_FILE", ca.as_str())];
    let (_open, addr) = listener();
    let outbound = vec![
        format!("connect={addr}"),
        "udp".into(),
        format!("read={ca}"),
    ];
    let still_denied = vec![
        "bind=127.0.0.1:0".to_string(),
        format!("read={}", area.path("secret.txt")),
    ];
    let all: Vec<String> = outbound.iter().chain(&still_denied).cloned().collect();

    let app = area.app(Lang::Lua, r#"{ hosts = { "127.0.0.1" } }"#);
    let with_hosts = start(&app, &all, &[], &env);
    assert_all(&with_hosts, &outbound, "allowed");
    assert_all(&with_hosts, &still_denied, "denied");

    let app = area.app(Lang::Lua, r#"{ env = { "HOME" } }"#);
    let without = start(&app, &all, &[], &env);
    assert_all(&without, &all, "denied");
}

#[test]
fn a_built_app_reads_its_executable_and_not_its_sources() {
    let area = Area::new();
    let app = area.app(Lang::Lua, "{}");
    let exe = area.root.join("built");
    let exit = run(&[
        "build",
        "-o",
        exe.to_str().unwrap(),
        app.parent().unwrap().to_str().unwrap(),
    ]);
    assert_eq!(exit.code, Some(0), "{}", exit.stderr);
    let own = vec![format!("read={}", exe.display())];
    let sources = vec![format!("read={}", app.display())];
    let mut args = probes(&own);
    args.extend(probes(&sources));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let built = Server::start_exe(&exe, &args).unwrap_or_else(|log| panic!("{log}"));
    assert_all(&built, &own, "allowed");
    assert_all(&built, &sources, "denied");
    assert_eq!(built.get("/").text(), "up");
}

#[test]
fn the_database_is_written_and_its_sidecars_removed_at_a_clean_stop() {
    let area = Area::new();
    let dir = area.root.join("app");
    std::fs::create_dir_all(dir.join("migrations")).unwrap();
    std::fs::write(
        dir.join("migrations/001_init.sql"),
        "CREATE TABLE notes (body TEXT);",
    )
    .unwrap();
    std::fs::write(
        dir.join("app.lua"),
        r#"app.post("/notes", function(req, res)
  db.exec("INSERT INTO notes (body) VALUES (?)", { req.body })
  res:text("saved")
end)
"#,
    )
    .unwrap();
    let mut server = Server::start(&dir.join("app.lua"), &[]);
    assert!(
        server.log().contains("[sandbox] applied"),
        "{}",
        server.log()
    );
    for body in ["one", "two"] {
        assert_eq!(server.post("/notes", body).text(), "saved");
    }
    let db = server.db_path().to_path_buf();
    server.signal(libc::SIGTERM);
    assert!(server.wait_exit().success(), "{}", server.log());
    for side in ["-wal", "-shm"] {
        let mut path = db.clone().into_os_string();
        path.push(side);
        assert!(!Path::new(&path).exists(), "{side} left behind");
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM notes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
}

#[test]
fn an_fs_list_that_is_not_a_list_refuses_the_start() {
    let area = Area::new();
    let app = area.app(Lang::Lua, r#"{ fs = { read = "/etc" } }"#);
    let log = Server::try_start(&app, &[]).err().expect("refused");
    assert!(
        log.contains("app.manifest: `fs.read` must be a list of paths (strings)"),
        "{log}"
    );
    // Nothing reads the list without the sandbox.
    Server::start(&app, &["--no-sandbox"]);
}
