//! `cove test [dir]`: Hull's in-process test runner (Hull §9). Per runtime,
//! one in-memory database with the migrations applied, the app loaded once,
//! then every `test_*.lua` (or `test_*.js` and `test_*.ts`) file in path order.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use cove_caps::testkit::Suite;
use cove_caps::Shared;
use cove_core::{walk_app_dir, AppFiles, Limits};
use cove_db::{Db, Origin, WriteLock};
use cove_js::JsEngine;
use cove_lua::LuaEngine;

use crate::app::{canonical_dir, entries_in, AppSource, Runtime, ENTRY_NAMES};
use crate::cli::TestArgs;

/// Test files of one runtime: `test_*.<ext>` anywhere under the app
/// (TypeScript's `test_*.ts` run on the JavaScript runtime).
fn test_files(all: &[String], runtime: Runtime) -> Vec<String> {
    let suffixes: &[&str] = match runtime {
        Runtime::Lua => &[".lua"],
        Runtime::Js => &[".js", ".ts"],
    };
    all.iter()
        .filter(|rel| {
            let base = rel.rsplit('/').next().unwrap_or(rel);
            base.starts_with("test_") && suffixes.iter().any(|s| base.ends_with(s))
        })
        .cloned()
        .collect()
}

pub fn run(args: &TestArgs) -> Result<i32> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    if !dir.is_dir() {
        bail!(
            "test: {} is not a directory (pass the app directory)",
            dir.display()
        );
    }
    let root = canonical_dir(&dir)?;
    let mut entries = entries_in(&root);
    if entries.is_empty() {
        bail!(
            "test: no entry point found ({ENTRY_NAMES}) in {}",
            dir.display()
        );
    }
    // Lua first, then JavaScript, as in Hull; one entry per runtime (app.js
    // before app.ts).
    entries.sort_by_key(|(_, rt)| *rt != Runtime::Lua);
    entries.dedup_by_key(|(_, rt)| *rt);
    cove_caps::time::start_clock();
    let all = walk_app_dir(&root)?;
    let mut ran = false;
    let mut failed = false;
    for (entry, runtime) in entries {
        let tests = test_files(&all, runtime);
        if tests.is_empty() {
            continue;
        }
        ran = true;
        let app = AppSource {
            files: AppFiles::Dir(root.clone()),
            entry: entry.to_string(),
            runtime,
        };
        let suite = run_runtime(&app, &tests, args.db.as_deref())?;
        println!("\n{}", suite.summary());
        failed |= suite.failed() > 0;
    }
    if !ran {
        bail!(
            "test: no test files found in {} (name them test_*.lua, test_*.js or test_*.ts)",
            dir.display()
        );
    }
    Ok(i32::from(failed))
}

/// One runtime's suite against a fresh database: in memory, or a schema of
/// its own in the PostgreSQL database `pg`, dropped afterwards.
fn run_runtime(app: &AppSource, tests: &[String], pg: Option<&str>) -> Result<Suite> {
    let Some(url) = pg else {
        let db = Db::open(Path::new(":memory:"), WriteLock::default())
            .map_err(|e| anyhow::anyhow!("test: cannot open an in-memory database: {e}"))?;
        return run_with(app, tests, db);
    };
    let schema = format!("cove_test_{}_{}", std::process::id(), app.runtime.ext());
    let fresh = format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}");
    let mut admin = Db::connect(url).map_err(|e| anyhow::anyhow!("test: {e}"))?;
    admin
        .exec(&fresh, &[], Origin::Stdlib)
        .map_err(|e| anyhow::anyhow!("test: cannot create schema {schema}: {e}"))?;
    let suite = Db::connect_in_schema(url, &schema)
        .map_err(|e| anyhow::anyhow!("test: {e}"))
        .and_then(|db| run_with(app, tests, db));
    let dropped = admin.exec(
        &format!("DROP SCHEMA {schema} CASCADE"),
        &[],
        Origin::Stdlib,
    );
    if let Err(e) = dropped {
        eprintln!("test: could not drop schema {schema}: {e}");
    }
    suite
}

fn run_with(app: &AppSource, tests: &[String], mut db: Db) -> Result<Suite> {
    // Hull ignores a failing migration here; a test run against a schema that
    // did not apply would only fail later and more confusingly.
    db.migrate(&app.files)
        .map_err(|e| anyhow::anyhow!("test: migration failed: {e}"))?;
    let config = app.script_config(Limits::default(), false);
    let mut suite = Suite::printing();
    let failed_load = |e: String| anyhow::anyhow!("test: failed to load {}: {e}", app.entry);
    match app.runtime {
        Runtime::Lua => {
            let loaded = LuaEngine::load(&config, db, &Shared::default()).map_err(failed_load)?;
            cove_lua::testing::run_suite(loaded, &app.files, tests, &mut suite);
        }
        Runtime::Js => {
            let loaded = JsEngine::load(&config, db, &Shared::default()).map_err(failed_load)?;
            cove_js::testing::run_suite(loaded, &app.files, tests, &mut suite);
        }
    }
    Ok(suite)
}

/// Stand-in until `cove test --json` lands (helper branch agent-test).
pub fn agent_test(_dir: Option<&Path>) -> Result<i32> {
    bail!("agent test: not yet")
}
