//! `cove test [dir]`: Hull's in-process test runner (Hull §9). Per runtime,
//! one in-memory database with the migrations applied, the app loaded once,
//! then every `test_*.lua` (or `test_*.js` and `test_*.ts`) file in path order.
//! The results print as Hull's text, or as JSON (`--json`, `cove agent test`).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use cove_caps::testkit::Suite;
use cove_caps::Shared;
use cove_core::{walk_app_dir, AppFiles, Limits};
use cove_db::{Db, Origin, WriteLock};
use cove_js::JsEngine;
use cove_lua::LuaEngine;

use crate::app::{canonical_dir, entries_in, AppSource, Runtime, ENTRY_NAMES};
use crate::cli::TestArgs;

mod report;

/// A file's name without its directories.
fn base(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// Test files of one runtime: `test_*.<ext>` anywhere under the app
/// (TypeScript's `test_*.ts` run on the JavaScript runtime).
fn test_files(all: &[String], runtime: Runtime) -> Vec<String> {
    let suffixes: &[&str] = match runtime {
        Runtime::Lua => &[".lua"],
        Runtime::Js => &[".js", ".ts"],
    };
    all.iter()
        .filter(|rel| {
            let base = base(rel);
            base.starts_with("test_") && suffixes.iter().any(|s| base.ends_with(s))
        })
        .cloned()
        .collect()
}

/// A runtime's suite to run: the app with its entry, and its test files.
struct Planned {
    app: AppSource,
    tests: Vec<String>,
}

/// The suites of the app in `dir`, Lua's first as in Hull; only the first
/// when `preferred_only` (Hull's agent commands take app.lua over app.js).
fn plan(dir: &Path, only: &[String], preferred_only: bool) -> Result<Vec<Planned>> {
    if !dir.is_dir() {
        bail!(
            "test: {} is not a directory (pass the app directory)",
            dir.display()
        );
    }
    let root = canonical_dir(dir)?;
    let mut entries = entries_in(&root);
    if entries.is_empty() {
        bail!(
            "test: no entry point found ({ENTRY_NAMES}) in {}",
            dir.display()
        );
    }
    // One entry per runtime (app.js before app.ts).
    entries.sort_by_key(|(_, rt)| *rt != Runtime::Lua);
    entries.dedup_by_key(|(_, rt)| *rt);
    if preferred_only {
        entries.truncate(1);
    }
    let all = walk_app_dir(&root)?;
    let mut planned: Vec<Planned> = entries
        .into_iter()
        .map(|(entry, runtime)| Planned {
            app: AppSource {
                files: AppFiles::Dir(root.clone()),
                entry: entry.to_string(),
                runtime,
            },
            tests: test_files(&all, runtime),
        })
        .collect();
    if planned.iter().all(|p| p.tests.is_empty()) {
        bail!(
            "test: no test files found in {} (name them test_*.lua, test_*.js or test_*.ts)",
            dir.display()
        );
    }
    select(&mut planned, only)?;
    planned.retain(|p| !p.tests.is_empty());
    Ok(planned)
}

/// `--file NAME`: keep the test files whose path in the app or whose file
/// name is a NAME. A NAME that matches none is a mistake, not an empty run.
fn select(planned: &mut [Planned], only: &[String]) -> Result<()> {
    if only.is_empty() {
        return Ok(());
    }
    let is = |rel: &str, name: &str| {
        let name = name.strip_prefix("./").unwrap_or(name);
        rel == name || base(rel) == name
    };
    let tests = || planned.iter().flat_map(|p| &p.tests);
    if let Some(name) = only.iter().find(|n| !tests().any(|t| is(t, n))) {
        let there: Vec<&str> = tests().map(String::as_str).collect();
        bail!(
            "test: --file {name} matches no test file; the test files are: {}",
            there.join(", ")
        );
    }
    for p in planned {
        p.tests.retain(|t| only.iter().any(|n| is(t, n)));
    }
    Ok(())
}

pub fn run(args: &TestArgs) -> Result<i32> {
    let dir = args.dir.as_deref().unwrap_or(Path::new("."));
    if !args.json {
        return run_all(args, dir, Suite::printing, |_, suite, _| {
            println!("\n{}", suite.summary());
        });
    }
    // Even a failure to start is JSON on stdout, for scripts and agents.
    Ok(report::emit(run_all(
        args,
        dir,
        Suite::default,
        |rt, suite, took| {
            println!("{}", report::suite_json(rt, suite, took));
        },
    )))
}

/// Every planned suite in turn, each shown when done; 1 if any case failed.
fn run_all(
    args: &TestArgs,
    dir: &Path,
    new_suite: fn() -> Suite,
    mut show: impl FnMut(Runtime, &Suite, Duration),
) -> Result<i32> {
    let mut failed = false;
    for Planned { app, tests } in plan(dir, &args.files, false)? {
        let started = Instant::now();
        let suite = run_runtime(&app, &tests, args.db.as_deref(), new_suite())?;
        show(app.runtime, &suite, started.elapsed());
        failed |= suite.failed() > 0;
    }
    Ok(i32::from(failed))
}

/// `cove agent test [dir]`: Hull's `hull agent test` — one runtime (Lua
/// when the app has both), one JSON line in Hull's shape.
pub fn agent_test(dir: Option<&Path>) -> Result<i32> {
    let dir = dir.unwrap_or(Path::new("."));
    let run = || -> Result<i32> {
        let Some(Planned { app, tests }) = plan(dir, &[], true)?.into_iter().next() else {
            bail!("test: no test files found in {}", dir.display());
        };
        let suite = run_runtime(&app, &tests, None, Suite::default())?;
        println!("{}", report::agent_json(app.runtime, &suite));
        Ok(i32::from(suite.failed() > 0))
    };
    Ok(report::emit(run()))
}

/// One runtime's suite against a fresh database: in memory, or a schema of
/// its own in the PostgreSQL database `pg`, dropped afterwards.
fn run_runtime(app: &AppSource, tests: &[String], pg: Option<&str>, suite: Suite) -> Result<Suite> {
    let Some(url) = pg else {
        let db = Db::open(Path::new(":memory:"), WriteLock::default())
            .map_err(|e| anyhow::anyhow!("test: cannot open an in-memory database: {e}"))?;
        return run_with(app, tests, db, suite);
    };
    let schema = format!("cove_test_{}_{}", std::process::id(), app.runtime.ext());
    let fresh = format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}");
    let mut admin = Db::connect(url).map_err(|e| anyhow::anyhow!("test: {e}"))?;
    admin
        .exec(&fresh, &[], Origin::Stdlib)
        .map_err(|e| anyhow::anyhow!("test: cannot create schema {schema}: {e}"))?;
    let suite = Db::connect_in_schema(url, &schema)
        .map_err(|e| anyhow::anyhow!("test: {e}"))
        .and_then(|db| run_with(app, tests, db, suite));
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

fn run_with(app: &AppSource, tests: &[String], mut db: Db, mut suite: Suite) -> Result<Suite> {
    // Hull ignores a failing migration here; a test run against a schema that
    // did not apply would only fail later and more confusingly.
    db.migrate(&app.files)
        .map_err(|e| anyhow::anyhow!("test: migration failed: {e}"))?;
    let config = app.script_config(Limits::default(), false);
    cove_caps::time::start_clock();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn app_with(files: &[&str]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().expect("temp dir");
        for f in files {
            let path = tmp.path().join(f);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, "").expect("write");
        }
        tmp
    }

    fn runtimes(planned: &[Planned]) -> Vec<Runtime> {
        planned.iter().map(|p| p.app.runtime).collect()
    }

    #[test]
    fn the_agent_runs_only_lua_when_the_app_has_both() {
        let app = app_with(&["app.lua", "app.js", "tests/test_a.lua", "tests/test_a.js"]);
        let both = plan(app.path(), &[], false).expect("plan");
        assert_eq!(runtimes(&both), [Runtime::Lua, Runtime::Js]);
        let agent = plan(app.path(), &[], true).expect("plan");
        assert_eq!(runtimes(&agent), [Runtime::Lua]);
        assert_eq!(agent[0].tests, ["tests/test_a.lua"]);
        // As in Hull, app.lua wins even when only the JavaScript has tests.
        let app = app_with(&["app.lua", "app.js", "tests/test_a.js"]);
        let Err(e) = plan(app.path(), &[], true) else {
            panic!("planned Lua without tests");
        };
        assert!(e.to_string().contains("no test files found"), "{e}");
    }

    #[test]
    fn file_keeps_the_named_files_of_each_runtime() {
        let app = app_with(&[
            "app.lua",
            "app.js",
            "tests/test_a.lua",
            "test_b.lua",
            "tests/test_a.js",
        ]);
        let only = ["test_a.lua".to_string(), "./tests/test_a.js".to_string()];
        let planned = plan(app.path(), &only, false).expect("plan");
        let tests: Vec<&[String]> = planned.iter().map(|p| &p.tests[..]).collect();
        assert_eq!(tests, [["tests/test_a.lua"], ["tests/test_a.js"]]);
        // A runtime with none of the named files does not run.
        let planned = plan(app.path(), &["test_b.lua".to_string()], false).expect("plan");
        assert_eq!(runtimes(&planned), [Runtime::Lua]);
        assert_eq!(planned[0].tests, ["test_b.lua"]);
    }
}
