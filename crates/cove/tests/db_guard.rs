//! The database guard: app SQL that reaches for other files, Cove's
//! settings or the reserved `_hull_*` tables is refused, whatever its text
//! looks like (SQLite's authorizer, not a scan of the SQL). The fixture runs
//! the request body as app code (fixtures/db_guard/app.*).

use std::path::Path;

use serde_json::{json, Value};

use crate::util::{both, fixture, Lang, Server};

both!(
    other_files_cannot_be_attached_or_written,
    settings_cove_makes_are_read_only,
    writable_schema_and_extensions_are_refused,
    a_view_does_not_open_the_reserved_tables,
);

fn serve(lang: Lang) -> Server {
    serve_with(lang, &[])
}

fn serve_with(lang: Lang, extra: &[&str]) -> Server {
    Server::start(&fixture("db_guard").with_extension(lang.ext()), extra)
}

/// What the app said after running `sql` with `db.exec` or `db.query` (`api`).
fn run(s: &Server, api: &str, sql: &str) -> Value {
    let r = s.post(&format!("/{api}"), sql);
    assert_eq!(r.status, 200, "{sql}: {}", r.text());
    r.json()
}

/// The error message of `sql`, which must fail.
fn refused(s: &Server, api: &str, sql: &str) -> String {
    let v = run(s, api, sql);
    assert_eq!(v["ok"], false, "{sql} ran: {v}");
    v["error"].as_str().expect("error text").to_string()
}

fn other_files_cannot_be_attached_or_written(lang: Lang) {
    let s = serve(lang);
    let dir = s.db_path().parent().expect("temp dir").to_path_buf();
    let stolen = dir.join("stolen.db");
    let err = refused(
        &s,
        "exec",
        &format!("ATTACH DATABASE '{}' AS other", stolen.display()),
    );
    assert!(
        err.contains("access denied: app code may not ATTACH or DETACH databases"),
        "{lang:?}: {err}"
    );
    // A copy of the whole database, reserved tables and all. Inside a write
    // group SQLite refuses any VACUUM; without groups it would run.
    let copy = dir.join("copy.db");
    let vacuum = format!("VACUUM INTO '{}'", copy.display());
    refused(&s, "exec", &vacuum);
    let ungrouped = serve_with(lang, &["--no-group-commit"]);
    let err = refused(&ungrouped, "exec", &vacuum);
    assert!(err.contains("or VACUUM"), "{lang:?}: {err}");
    assert!(!Path::new(&stolen).exists() && !copy.exists());
}

fn settings_cove_makes_are_read_only(lang: Lang) {
    let s = serve(lang);
    for sql in [
        "PRAGMA journal_mode = DELETE",
        "PRAGMA synchronous = OFF",
        "PRAGMA locking_mode = EXCLUSIVE",
    ] {
        let err = refused(&s, "exec", sql);
        let name = sql.split(' ').nth(1).unwrap();
        assert!(
            err.contains(&format!(
                "access denied: app code may read PRAGMA {name} but not change it"
            )),
            "{lang:?} {sql}: {err}"
        );
    }
    let v = run(&s, "query", "PRAGMA journal_mode");
    assert_eq!(v, json!({"ok": true, "out": [{"journal_mode": "wal"}]}));
    let v = run(&s, "query", "SELECT name FROM pragma_table_info('notes')");
    assert_eq!(v["out"], json!([{"name": "id"}, {"name": "body"}]));
}

fn writable_schema_and_extensions_are_refused(lang: Lang) {
    let s = serve(lang);
    let err = refused(&s, "exec", "PRAGMA writable_schema = 1");
    assert!(err.contains("PRAGMA writable_schema"), "{lang:?}: {err}");
    let err = refused(&s, "query", "SELECT load_extension('/tmp/x.so')");
    assert!(
        err.contains("access denied: load_extension() is not available to app code"),
        "{lang:?}: {err}"
    );
    let err = refused(&s, "exec", "ALTER TABLE notes RENAME TO _hull_outbox");
    assert!(
        err.contains("rename them in a migration"),
        "{lang:?}: {err}"
    );
}

fn a_view_does_not_open_the_reserved_tables(lang: Lang) {
    let s = serve(lang);
    // The migration's view names no reserved table in the app's SQL.
    let err = refused(&s, "query", "SELECT * FROM peek");
    assert!(
        err.contains("access denied: _hull_* tables are reserved"),
        "{lang:?}: {err}"
    );
    let err = refused(&s, "query", "SELECT count(*) AS n FROM peek");
    assert!(err.contains("reserved"), "{lang:?}: {err}");
    // Text that only looks reserved is no table.
    let v = run(&s, "query", "SELECT '_hull_sessions' AS s");
    assert_eq!(v, json!({"ok": true, "out": [{"s": "_hull_sessions"}]}));
    // The app's own tables are its own.
    assert_eq!(
        run(&s, "exec", "INSERT INTO notes (body) VALUES ('hi')"),
        json!({"ok": true, "out": 1})
    );
}

/// The stdlib creates its `_hull_*` tables through a private module whose
/// statements run with the stdlib's rights; an app that could load it
/// would run any SQL with them (`CREATE TABLE t AS SELECT * FROM
/// _hull_sessions`). Only stdlib modules may load it.
#[test]
fn the_stdlibs_table_helper_is_not_for_apps() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "app.lua",
            "local t = require('hull._tables')\napp.get('/', function(req, res) res:json({}) end)\n",
            "app.lua:1: module not found: hull._tables",
        ),
        (
            "app.js",
            "import { tables } from \"hull:_tables\";\nimport { app } from \"hull:app\";\napp.get(\"/\", (req, res) => res.json({}));\n",
            "app.js:1: ReferenceError: unknown hull module: hull:_tables",
        ),
        // Nor the stdlib's own db (what `hull:db` is to a stdlib module).
        (
            "app.js",
            "import { db } from \"hull:_db\";\nimport { app } from \"hull:app\";\napp.get(\"/\", (req, res) => res.json(db.query(\"SELECT * FROM _hull_migrations\")));\n",
            "app.js:1: ReferenceError: unknown hull module: hull:_db",
        ),
    ];
    for (i, (entry, source, want)) in cases.into_iter().enumerate() {
        let dir = tmp.path().join(format!("{i}_{}", entry.replace('.', "_")));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(entry), source).unwrap();
        let db = dir.join("data.db");
        let r = crate::util::run(&[
            "-p",
            "0",
            "-d",
            db.to_str().unwrap(),
            dir.join(entry).to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(1), "{entry}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{entry}: {}", r.stderr);
        assert!(!r.stderr.contains("_tables,"), "listed: {}", r.stderr);
    }
}
