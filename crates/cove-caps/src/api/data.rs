//! `hull:db` (Lua global `db`) and `hull:json` (Lua global `json`, also
//! `require("hull.json")`). Bindings: db by each runtime
//! (crates/cove-lua/src/prelude.lua, db.rs; crates/cove-js/src/prelude.js,
//! db.rs); json through the capability table (crate::cap, its functions
//! crate::json `FUNCTIONS`).
//!
//! `db.dialect` is a string field ("sqlite" or "postgres"), not a
//! function: a module has no fields in the catalog, so the module doc
//! names it.

use super::types::TypeDef;
use super::{opt, p, Module, Sig, Ty};

const ROWS: Ty = Ty::List(&Ty::Named("Row"));
const PARAMS: Ty = Ty::List(&Ty::Any);

const DB_FUNCTIONS: &[Sig] = &[
    Sig::both(
        "query",
        &[p("sql", Ty::Str), opt("params", PARAMS)],
        ROWS,
        "run one statement with ? placeholders and return its rows (none: an empty list)",
    )
    .slow(),
    Sig::js_only(
        "queryAsync",
        &[p("sql", Ty::Str), opt("params", PARAMS)],
        Ty::Promise(&ROWS),
        "db.query as a promise: the worker serves other requests while PostgreSQL answers",
    )
    .slow(),
    Sig::both(
        "exec",
        &[p("sql", Ty::Str), opt("params", PARAMS)],
        Ty::Int,
        "run a statement that changes data and return how many rows it changed (without params: several statements)",
    )
    .slow(),
    Sig::js_only(
        "execAsync",
        &[p("sql", Ty::Str), opt("params", PARAMS)],
        Ty::Promise(&Ty::Int),
        "db.exec as a promise: the worker serves other requests while PostgreSQL answers",
    )
    .slow(),
    Sig::named(
        "last_id",
        "lastId",
        &[],
        Ty::Int,
        "the id of the row the last INSERT on this worker's connection created",
    ),
    Sig::both(
        "batch",
        &[p("fn", Ty::Fn)],
        Ty::Any,
        "run fn in a transaction: commit if it returns, roll back and re-raise if it raises; returns what fn returns (JS: fn must be synchronous)",
    ),
];

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
        functions: DB_FUNCTIONS.to_vec(),
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
