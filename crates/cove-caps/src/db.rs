//! `db.*` (Hull §5) as scripts call it: the functions over a worker's
//! connection (cove-db), declared once for the capability table
//! ([`crate::cap`]) and the API catalog. `db.batch` takes a function, which
//! no capability value carries: each runtime's prelude builds it over the
//! batch steps, and `db.dialect` is a field (api/data.rs).

use crate::sig::{opt, p, Param, Ty};

/// What a `db.*` function does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbOp {
    /// One statement; its rows.
    Query,
    /// A statement that changes data; how many rows it changed.
    Exec,
    /// The id the last INSERT made.
    LastId,
}

/// One `db.*` function as the capability table binds it and the catalog
/// lists it.
pub struct DbFn {
    pub lua: &'static str,
    pub js: &'static str,
    pub op: DbOp,
    pub params: &'static [Param],
    pub ret: Ty,
    pub doc: &'static str,
}

impl DbFn {
    /// Whether it runs a statement (on PostgreSQL a call that waits; JS
    /// also has the `…Async` form).
    pub fn runs_sql(&self) -> bool {
        self.op != DbOp::LastId
    }
}

const STATEMENT: &[Param] = &[p("sql", Ty::Str), opt("params", Ty::List(&Ty::Any))];

/// `db.*`, in the catalog's order.
pub const FUNCTIONS: &[DbFn] = &[
    DbFn {
        lua: "query",
        js: "query",
        op: DbOp::Query,
        params: STATEMENT,
        ret: Ty::List(&Ty::Named("Row")),
        doc: "run one statement with ? placeholders and return its rows (none: an empty list)",
    },
    DbFn {
        lua: "exec",
        js: "exec",
        op: DbOp::Exec,
        params: STATEMENT,
        ret: Ty::Int,
        doc: "run a statement that changes data and return how many rows it changed (without params: several statements)",
    },
    DbFn {
        lua: "last_id",
        js: "lastId",
        op: DbOp::LastId,
        params: &[],
        ret: Ty::Int,
        doc: "the id of the row the last INSERT on this worker's connection created",
    },
];
