//! The app loaded against a scratch database (in memory, migrations
//! applied): what `cove routes` reports, and the check a server makes
//! before it creates or migrates the real database.

use std::path::Path;

use anyhow::{anyhow, Result};

use cove_caps::Shared;
use cove_core::{log, AppFiles, Limits, RouteTable};
use cove_db::{Db, DbError, WriteLock};
use cove_js::JsEngine;
use cove_lua::LuaEngine;

use crate::app::{AppSource, Runtime};
use crate::cli::ServeArgs;

/// A fresh in-memory database with the app's migrations applied.
pub(crate) fn memory_with_migrations(files: &AppFiles) -> Result<Db> {
    let mut db = Db::open(Path::new(":memory:"), WriteLock::default())?;
    db.migrate(files).map_err(|e| match e {
        DbError::Migration { file, message } => {
            anyhow!("migration failed: migrations/{file}: {message}")
        }
        other => anyhow!("migration failed: {other}"),
    })?;
    Ok(db)
}

/// Load the app once with `db` and return what it registered. The kv store
/// is a private one, so load-time writes reach no shared store.
pub(crate) fn load_routes(app: &AppSource, db: Db, limits: Limits) -> Result<RouteTable, String> {
    let config = app.script_config(limits, false);
    let shared = Shared::default();
    Ok(match app.runtime {
        Runtime::Lua => LuaEngine::load(&config, db, &shared)?.routes,
        Runtime::Js => JsEngine::load(&config, db, &shared)?.routes,
    })
}

/// Whether the real database is about to be created or migrated, so that
/// the app must be shown to load first: a new SQLite file, or pending
/// migrations. PostgreSQL is not checked (a SQLite scratch database cannot
/// stand in for its SQL) and neither is `:memory:` (nothing outlives it).
pub(crate) enum Check {
    /// The file does not exist yet: check before opening it.
    NewFile,
    /// The file exists: check if, once opened, it has pending migrations.
    IfPending,
    Skip,
}

impl Check {
    pub(crate) fn for_args(args: &ServeArgs) -> Check {
        let db = args.db.as_path();
        if crate::target::postgres_url(db).is_some() || db.as_os_str() == ":memory:" {
            Check::Skip
        } else if !db.exists() {
            Check::NewFile
        } else if args.no_migrate {
            Check::Skip
        } else {
            Check::IfPending
        }
    }
}

/// Load the app against a scratch database with every migration applied;
/// its load error (or, for a new file, a failing migration) refuses the
/// start before the real database is touched.
pub(crate) fn check_loads(
    app: &AppSource,
    limits: &Limits,
    migrate: bool,
    new_file: bool,
) -> Result<()> {
    let db = if migrate {
        match memory_with_migrations(&app.files) {
            Ok(db) => db,
            // A new file would fail the same way: say so before creating it.
            Err(e) if new_file => return Err(anyhow!("{e}; refusing to start")),
            // An old database may be past what a fresh one fails on; the
            // real migration run will tell.
            Err(e) => {
                log::write(
                    log::Level::Debug,
                    "[cove]",
                    &format!("load check skipped: {e}"),
                );
                return Ok(());
            }
        }
    } else {
        Db::open(Path::new(":memory:"), WriteLock::default())?
    };
    load_routes(app, db, limits.clone())
        .map(drop)
        .map_err(|e| anyhow!("failed to load the app: {e}"))
}

/// How many of the app's migrations `db` has not applied.
pub(crate) fn pending(db: &mut Db, files: &AppFiles) -> usize {
    db.migration_status(files).map_or(0, |all| {
        all.iter().filter(|m| m.applied_at.is_none()).count()
    })
}
