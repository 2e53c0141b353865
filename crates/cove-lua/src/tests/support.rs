//! A real app loaded the way `cove` loads one (prelude, `db`, `json`,
//! `res`, `hull.template`), in a temporary directory, with an in-memory
//! database: the property tests drive its Lua state directly and its routes
//! through the in-process dispatcher `cove test` uses.

use std::path::Path;

use mlua::Lua;
use proptest::test_runner::{Config, TestRunner};

use cove_caps::testkit::{dispatch, TestCall, TestReply};
use cove_caps::Shared;
use cove_core::{AppFiles, Limits, ScriptConfig};
use cove_db::{Db, WriteLock};

use crate::{LuaApp, LuaEngine};

/// The plain-Lua reference encoder, installed as the global `REF`.
const REFERENCE: &str = include_str!("reference.lua");

pub(crate) struct TestApp {
    pub(crate) app: LuaApp,
    dir: tempfile::TempDir,
}

impl TestApp {
    /// Load `app_lua` as `app.lua`, then the reference encoder.
    pub(crate) fn load(app_lua: &str) -> TestApp {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("app.lua"), app_lua).expect("write app.lua");
        std::fs::create_dir(dir.path().join("templates")).expect("mkdir templates");
        let config = ScriptConfig {
            files: AppFiles::Dir(dir.path().to_path_buf()),
            entry: "app.lua".into(),
            limits: Limits::default(),
            group_commit: false,
        };
        let db = Db::open(Path::new(":memory:"), WriteLock::default()).expect("memory db");
        let app = LuaEngine::load(&config, db, &Shared::default()).expect("app loads");
        let loaded = TestApp { app, dir };
        loaded
            .lua()
            .load(REFERENCE)
            .set_name("=reference.lua")
            .exec()
            .expect("reference encoder loads");
        loaded
    }

    pub(crate) fn lua(&self) -> &Lua {
        &self.app.engine.lua
    }

    /// Write `templates/<name>`, which the next render of it reads once
    /// the template cache is cleared.
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
