//! `db.*` (Hull §5) over cove-db: `raw.dbQuery`, `raw.dbExec`, `raw.dbLastId`
//! and the batch steps the prelude's `db.batch` wraps.

use std::rc::Rc;

use rquickjs::function::Opt;
use rquickjs::{Array, Ctx, Object, Value};

use cove_core::{Job, JobOutput};
use cove_db::{Db, DbError, Origin, ResultSet, Value as DbValue};

use crate::bind::{set_fn, throw, type_name};
use crate::host::Host;
use crate::raw::bytes::binary_of;
use crate::raw::rows::{column_value, Rows};
use crate::raw::value::{Val, View};

/// Largest integer a double holds exactly; integral numbers up to it bind
/// as INTEGER.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

fn param(v: &Val<'_>, i: usize) -> rquickjs::Result<Result<DbValue, String>> {
    Ok(Ok(match v.view() {
        View::Null | View::Undefined => DbValue::Null,
        View::Bool(b) => DbValue::Integer(i64::from(b)),
        View::Int(n) => DbValue::Integer(i64::from(n)),
        View::Float(f) if f.fract() == 0.0 && f.abs() <= MAX_SAFE => DbValue::Integer(f as i64),
        View::Float(f) => DbValue::Real(f),
        View::Str(s) => DbValue::Text(s.text()?.into_bytes()),
        view => match binary_of(v)? {
            Some(bytes) => DbValue::Blob(bytes),
            None => {
                return Ok(Err(format!(
                    "parameter {} is {}; pass strings, numbers, booleans, null or an ArrayBuffer/Uint8Array",
                    i + 1,
                    view.type_name()
                )))
            }
        },
    }))
}

fn params(ctx: &Ctx<'_>, api: &str, p: Opt<Value<'_>>) -> rquickjs::Result<Vec<DbValue>> {
    let Some(v) = p.0.filter(|v| !v.is_null() && !v.is_undefined()) else {
        return Ok(Vec::new());
    };
    let arr = Val::lend(&v);
    let arr = match arr.view() {
        View::Object(o) if o.is_array() => o,
        _ => {
            return Err(rquickjs::Exception::throw_type(
                ctx,
                &format!("{api}: params must be an array, got {}", type_name(&v)),
            ))
        }
    };
    let n = arr.len()?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let item = arr.index(i as u32)?;
        match param(&item, i as usize) {
            Ok(Ok(p)) => out.push(p),
            Ok(Err(e)) => return Err(throw(ctx, &format!("{api}: {e}"))),
            Err(e) => return Err(throw(ctx, &format!("{api}: {e}"))),
        }
    }
    Ok(out)
}

/// `db.query`: the rows as an array of objects (raw/rows.rs).
fn query<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    sql: &str,
    p: Vec<DbValue>,
    origin: Origin,
) -> rquickjs::Result<Value<'js>> {
    let mut rows = Rows::new(ctx);
    let mut js_error = None;
    let result = {
        let mut db = host.db.borrow_mut();
        rows.clear();
        db.query(sql, &p, origin, |cols, row| {
            rows.push(cols, row).map_err(|e| {
                js_error = Some(e);
                DbError::Callback("building the result failed".into())
            })
        })
    };
    if let Some(e) = js_error {
        return Err(e);
    }
    result.map_err(|e| db_error(ctx, "db.query failed", &e))?;
    rows.finish()
}

/// A database error as scripts see it: `<what>: <why>`, with its code.
fn db_error(ctx: &Ctx<'_>, what: &str, e: &DbError) -> rquickjs::Error {
    crate::bind::throw_cap(ctx, &e.cap(what))
}

fn failed_job(ctx: &Ctx<'_>) -> rquickjs::Error {
    throw(ctx, "the background job failed")
}

/// `db.queryAsync`'s rows.
fn finish_query<'js>(ctx: &Ctx<'js>, out: JobOutput) -> rquickjs::Result<Value<'js>> {
    let set = out
        .downcast::<Result<ResultSet, DbError>>()
        .map_err(|_| failed_job(ctx))?
        .map_err(|e| db_error(ctx, "db.query failed", &e))?;
    let rows = Array::new(ctx.clone())?;
    for (i, row) in set.rows.iter().enumerate() {
        let obj = Object::new(ctx.clone())?;
        for (name, v) in set.columns.iter().zip(row) {
            obj.set(name.as_str(), column_value(ctx, v.as_ref())?)?;
        }
        rows.set(i, obj)?;
    }
    Ok(rows.into_value())
}

/// `db.execAsync`'s count of changed rows (an INSERT's id is `db.lastId()` already).
fn finish_exec<'js>(ctx: &Ctx<'js>, out: JobOutput) -> rquickjs::Result<Value<'js>> {
    let (changed, _) = out
        .downcast::<Result<(u64, Option<i64>), DbError>>()
        .map_err(|_| failed_job(ctx))?
        .map_err(|e| db_error(ctx, "db.exec failed", &e))?;
    Ok(Value::new_number(ctx.clone(), changed as f64))
}

/// `db.queryAsync` / `db.execAsync`: on PostgreSQL a promise the worker
/// settles while it serves other requests; on SQLite, whose queries do not
/// wait, the plain call's result as a settled promise.
fn add_async<'js>(
    raw: &Object<'js>,
    host: &Rc<Host>,
    origin: Origin,
    suffix: &str,
) -> rquickjs::Result<()> {
    let h = host.clone();
    set_fn(
        raw,
        &format!("dbQueryAsync{suffix}"),
        move |ctx: Ctx<'js>, sql: String, p: Opt<Value<'js>>| {
            let p = params(&ctx, "db.queryAsync", p)?;
            let later = h.db.borrow_mut().query_later(&sql, p.clone(), origin);
            match later {
                Some(fut) => h.await_job(&ctx, Job::future(fut), finish_query),
                None => crate::host::settled(&ctx, query(&ctx, &h, &sql, p, origin)),
            }
        },
    )?;
    let h = host.clone();
    set_fn(
        raw,
        &format!("dbExecAsync{suffix}"),
        move |ctx: Ctx<'js>, sql: String, p: Opt<Value<'js>>| {
            let p = params(&ctx, "db.execAsync", p)?;
            let later = h.db.borrow_mut().exec_later(&sql, p.clone(), origin);
            match later {
                Some(fut) => h.await_job(&ctx, Job::future(fut), finish_exec),
                None => {
                    let done =
                        h.db.borrow_mut()
                            .exec(&sql, &p, origin)
                            .map(|n| Value::new_number(ctx.clone(), n as f64))
                            .map_err(|e| db_error(&ctx, "db.exec failed", &e));
                    crate::host::settled(&ctx, done)
                }
            }
        },
    )
}

fn batch_step(
    ctx: &Ctx<'_>,
    host: &Host,
    step: fn(&mut Db) -> Result<(), DbError>,
) -> rquickjs::Result<()> {
    let result = step(&mut host.db.borrow_mut());
    result.map_err(|e| db_error(ctx, "db.batch", &e))
}

/// `raw.dbQuery`, `dbExec` and their `…Async` forms, the app's; and the
/// stdlib's (`…Stdlib`), which may use the reserved tables: the prelude
/// builds the `db` stdlib modules import from them (modules.rs). Which one
/// a call runs as is settled by which function it is, before the query.
fn add_calls<'js>(
    raw: &Object<'js>,
    host: &Rc<Host>,
    origin: Origin,
    suffix: &str,
) -> rquickjs::Result<()> {
    let h = host.clone();
    set_fn(
        raw,
        &format!("dbQuery{suffix}"),
        move |ctx: Ctx<'js>, sql: String, p: Opt<Value<'js>>| {
            let p = params(&ctx, "db.query", p)?;
            query(&ctx, &h, &sql, p, origin)
        },
    )?;
    let h = host.clone();
    set_fn(
        raw,
        &format!("dbExec{suffix}"),
        move |ctx: Ctx<'js>, sql: String, p: Opt<Value<'js>>| {
            let p = params(&ctx, "db.exec", p)?;
            let changes =
                h.db.borrow_mut()
                    .exec(&sql, &p, origin)
                    .map_err(|e| db_error(&ctx, "db.exec failed", &e))?;
            Ok::<_, rquickjs::Error>(changes as f64)
        },
    )?;
    add_async(raw, host, origin, suffix)
}

pub(crate) fn add<'js>(raw: &Object<'js>, host: &Rc<Host>) -> rquickjs::Result<()> {
    add_calls(raw, host, Origin::App, "")?;
    add_calls(raw, host, Origin::Stdlib, "Stdlib")?;
    let h = host.clone();
    set_fn(raw, "dbLastId", move || h.db.borrow().last_id() as f64)?;
    let dialect = host.db.borrow().dialect().name();
    raw.set("dbDialect", dialect)?;
    for (name, step) in [
        (
            "dbBegin",
            Db::begin_batch as fn(&mut Db) -> Result<(), DbError>,
        ),
        ("dbCommit", Db::commit_batch),
        ("dbRollback", Db::rollback_batch),
    ] {
        let h = host.clone();
        set_fn(raw, name, move |ctx: Ctx<'js>| batch_step(&ctx, &h, step))?;
    }
    Ok(())
}
