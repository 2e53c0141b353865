//! A real app loaded the way `cove` loads one (prelude, `hull:*` modules,
//! kept shapes, the layout probe), in a temporary directory, with an
//! in-memory database: the property tests evaluate code in its context
//! and call its routes through the in-process dispatcher `cove test` uses.

use std::path::Path;

use proptest::test_runner::{Config, TestRunner};
use rquickjs::{Ctx, Value};

use cove_caps::testkit::{dispatch, TestCall, TestReply};
use cove_caps::Shared;
use cove_core::{AppFiles, Limits, ScriptConfig};
use cove_db::{Db, WriteLock};

use crate::{JsApp, JsEngine};

pub(crate) struct TestApp {
    pub(crate) app: JsApp,
    dir: tempfile::TempDir,
}

impl TestApp {
    /// Load `app_js` as `app.js`.
    pub(crate) fn load(app_js: &str) -> TestApp {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("app.js"), app_js).expect("write app.js");
        std::fs::create_dir(dir.path().join("templates")).expect("mkdir templates");
        let config = ScriptConfig {
            files: AppFiles::Dir(dir.path().to_path_buf()),
            entry: "app.js".into(),
            limits: Limits::default(),
            group_commit: false,
        };
        let db = Db::open(Path::new(":memory:"), WriteLock::default()).expect("memory db");
        let app = JsEngine::load(&config, db, &Shared::default()).expect("app loads");
        TestApp { app, dir }
    }

    /// Run `f` in the app's context with a fresh instruction budget.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Ctx<'_>) -> R) -> R {
        self.app.engine.budget.reset();
        self.app.engine.context.with(|ctx| f(&ctx))
    }

    /// Write `templates/<name>`.
    pub(crate) fn write_template(&self, name: &str, source: &str) {
        let path = self.dir.path().join("templates").join(name);
        std::fs::write(path, source).expect("write template");
    }

    pub(crate) fn get(&self, path: &str) -> TestReply {
        let call = TestCall {
            method: "GET".into(),
            path: path.into(),
            ..TestCall::default()
        };
        dispatch(&self.app.routes, &self.app.engine, call)
    }
}

/// Evaluate `src`, panicking with the exception and the source.
pub(crate) fn eval<'js>(ctx: &Ctx<'js>, src: &str) -> Value<'js> {
    match ctx.eval::<Value, _>(src) {
        Ok(v) => v,
        Err(e) => {
            let thrown = ctx.catch();
            let text = thrown
                .as_exception()
                .map(|x| format!("{x}"))
                .or_else(|| thrown.as_string().and_then(|s| s.to_string().ok()))
                .unwrap_or_else(|| format!("{e}"));
            panic!("{text}\n{src}")
        }
    }
}

/// What `JSON.stringify` makes of `v`: `Ok(None)` for `undefined`,
/// `Err` with the exception's text when it throws (a cycle).
pub(crate) fn stringify<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> Result<Option<String>, String> {
    match ctx.json_stringify(v) {
        Ok(s) => Ok(s.map(|s| s.to_string().expect("utf-8"))),
        Err(_) => Err(format!("{:?}", ctx.catch())),
    }
}

/// What `res.json`'s serializer makes of `v`: `None` when it hands the
/// value to `JSON.stringify`.
pub(crate) fn ours<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<String> {
    let mut out = Vec::new();
    let handled = crate::json::encode(ctx, v, &mut out).expect("no exception");
    handled.then(|| String::from_utf8(out).expect("the serializer writes UTF-8"))
}

/// A runner for `default` cases, or `PROPTEST_CASES`; failures are not
/// persisted to files (the failing input is in the panic message).
pub(crate) fn runner(default: u32) -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}
