//! `hull:db` (Lua global `db`) and `hull:json` (Lua global `json`, also
//! `require("hull.json")`), both bound through the capability table
//! (crate::cap; their functions crate::db and crate::json `FUNCTIONS`);
//! `db.batch` is built by each runtime's prelude over the batch steps.
//!
//! `db.dialect` is a string field ("sqlite" or "postgres"), not a
//! function: a module has no fields in the catalog, so the module doc
//! names it.

use super::types::TypeDef;
use super::{p, Module, Sig, Ty};

/// `db.*` from the capability table's declarations (crate::db), each that
/// runs a statement with its JS `…Async` twin; then `db.batch`, which the
/// preludes build.
fn db_functions() -> Vec<Sig> {
    let mut out = Vec::new();
    for f in crate::db::FUNCTIONS {
        let sig = Sig::named(f.lua, f.js, f.params, f.ret, f.doc);
        if !f.runs_sql() {
            out.push(sig);
            continue;
        }
        out.push(sig.slow());
        let doc = super::tables::leak(vec![format!(
            "db.{} as a promise: the worker serves other requests while PostgreSQL answers",
            f.js
        )])[0]
            .as_str();
        out.push(super::tables::async_twin(f.js, f.params, f.ret, doc));
    }
    const BATCH: &[super::Param] = &[p("fn", Ty::Fn)];
    out.push(Sig::both(
        "batch",
        BATCH,
        Ty::Any,
        "run fn in a transaction: commit if it returns, roll back and re-raise if it raises; returns what fn returns (JS: fn must be synchronous)",
    ));
    out
}

const DB_TYPES: &[TypeDef] = &[TypeDef {
    name: "Row",
    doc: "A row: column name → value (Lua: a NULL column is absent; JS: null; a BLOB is a Lua string / JS ArrayBuffer)",
    fields: &[],
    methods: &[],
}];

/// `hull:db`, the Lua global `db`.
pub(super) fn db() -> Module {
    Module {
        js: "hull:db",
        lua_global: Some("db"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc: "The app's SQL database (SQLite or PostgreSQL); db.dialect is the string \"sqlite\" or \"postgres\"",
        functions: db_functions(),
        types: DB_TYPES,
    }
}

/// `hull:json`, the Lua global `json` (also `require("hull.json")`).
pub(super) fn json() -> Module {
    Module {
        js: "hull:json",
        lua_global: Some("json"),
        lua_require: Some("hull.json"),
        native: true,
        private: false,
        default_export: false,
        doc: "JSON encoding and decoding",
        functions: crate::json::FUNCTIONS
            .iter()
            .map(|f| Sig::both(f.name, f.params, f.ret, f.doc))
            .collect(),
        types: &[],
    }
}
