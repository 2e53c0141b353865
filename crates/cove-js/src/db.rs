//! `db.*` (Hull §5) over cove-db: `raw.dbQuery`, `raw.dbExec`, `raw.dbLastId`
//! and the batch steps the prelude's `db.batch` wraps.
#![allow(unsafe_code)]

use std::rc::Rc;

use rquickjs::function::Opt;
use rquickjs::{qjs, Array, ArrayBuffer, Ctx, Object, Value};

use cove_core::{Job, JobOutput};
use cove_db::{Db, DbError, Origin, ResultSet, Value as DbValue, ValueRef};

use crate::bind::{set_fn, throw, type_name};
use crate::host::Host;

/// Largest integer a double holds exactly; integral numbers up to it bind
/// as INTEGER.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

fn param(v: &Value<'_>, i: usize) -> Result<DbValue, String> {
    if v.is_null() || v.is_undefined() {
        return Ok(DbValue::Null);
    }
    if let Some(b) = v.as_bool() {
        return Ok(DbValue::Integer(i64::from(b)));
    }
    if let Some(n) = v.as_int() {
        return Ok(DbValue::Integer(i64::from(n)));
    }
    if let Some(f) = v.as_float() {
        return Ok(if f.fract() == 0.0 && f.abs() <= MAX_SAFE {
            DbValue::Integer(f as i64)
        } else {
            DbValue::Real(f)
        });
    }
    if let Some(s) = v.as_string() {
        return s
            .to_string()
            .map(|s| DbValue::Text(s.into_bytes()))
            .map_err(|e| e.to_string());
    }
    match crate::bytes::binary_of(v) {
        Ok(Some(bytes)) => return Ok(DbValue::Blob(bytes)),
        Ok(None) => {}
        Err(e) => return Err(e.to_string()),
    }
    Err(format!(
        "parameter {} is {}; pass strings, numbers, booleans, null or an ArrayBuffer/Uint8Array",
        i + 1,
        type_name(v)
    ))
}

fn params(ctx: &Ctx<'_>, api: &str, p: Opt<Value<'_>>) -> rquickjs::Result<Vec<DbValue>> {
    let Some(v) = p.0.filter(|v| !v.is_null() && !v.is_undefined()) else {
        return Ok(Vec::new());
    };
    let Some(arr) = v.as_array() else {
        return Err(rquickjs::Exception::throw_type(
            ctx,
            &format!("{api}: params must be an array, got {}", type_name(&v)),
        ));
    };
    arr.iter::<Value>()
        .enumerate()
        .map(|(i, v)| param(&v?, i).map_err(|e| throw(ctx, &format!("{api}: {e}"))))
        .collect()
}

/// Raw values and atoms owned here, freed on drop (a failed query).
struct Owned {
    raw: *mut qjs::JSContext,
    rows: Vec<qjs::JSValue>,
    atoms: Vec<qjs::JSAtom>,
    /// Per column, the string value of the last row (a reference of ours;
    /// `JS_NULL` if none): a row whose text is the same reuses it.
    last: Vec<qjs::JSValue>,
}

impl Owned {
    fn free_rows(&mut self) {
        for v in self.rows.drain(..) {
            // SAFETY: each row holds one reference, ours.
            unsafe { qjs::JS_FreeValue(self.raw, v) };
        }
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        self.free_rows();
        for v in self.last.drain(..) {
            // SAFETY: each kept string holds one reference, ours.
            unsafe { crate::layout::free(self.raw, v) };
        }
        // SAFETY: each atom holds one reference, ours.
        unsafe {
            for a in self.atoms.drain(..) {
                qjs::JS_FreeAtom(self.raw, a);
            }
        }
    }
}

/// A new reference to the JS value of a column.
fn column(ctx: &Ctx<'_>, v: ValueRef<'_>) -> rquickjs::Result<qjs::JSValue> {
    let raw = ctx.as_raw().as_ptr();
    Ok(match v {
        ValueRef::Null => qjs::JS_NULL,
        ValueRef::Integer(i) => match i32::try_from(i) {
            Ok(small) => qjs::JS_MKVAL(qjs::JS_TAG_INT, small),
            Err(_) => qjs::JS_NewFloat64(i as f64),
        },
        ValueRef::Real(f) => qjs::JS_NewFloat64(f),
        ValueRef::Text(t) => {
            let text = cove_core::utf8_lossy(t);
            // SAFETY: a new string from valid UTF-8; we own the reference.
            unsafe {
                let s = qjs::JS_NewStringLen(raw, text.as_ptr().cast(), text.len() as _);
                if qjs::JS_IsException(s) {
                    return Err(rquickjs::Error::Exception);
                }
                s
            }
        }
        ValueRef::Blob(b) => {
            let buf = ArrayBuffer::new_copy(ctx.clone(), b)?.into_value();
            // SAFETY: a second reference, for the caller; `buf` drops its own.
            unsafe { qjs::JS_DupValue(raw, buf.as_raw()) }
        }
    })
}

/// A new reference to the JS string of a text column: `last` (the
/// column's string in the row before) again when it has the same text,
/// else a new string, kept in `last` for the next row. Columns often
/// repeat a value from row to row (a status, a path, a time), and one
/// string shared costs no allocation and no conversion.
#[inline]
fn text(ctx: &Ctx<'_>, t: &[u8], last: &mut qjs::JSValue) -> rquickjs::Result<qjs::JSValue> {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `last` is a live string we hold (or JS_NULL), read only
    // while held; strings never change.
    unsafe {
        if crate::layout::ascii_bytes(*last) == Some(t) {
            return Ok(crate::layout::dup(raw, *last));
        }
        let v = column(ctx, ValueRef::Text(t))?;
        crate::layout::free(raw, *last);
        *last = crate::layout::dup(raw, v);
        Ok(v)
    }
}

/// `db.query`: the rows as an array of objects. Each row is built with
/// `JS_SetProperty` on raw atoms and the array in one `JS_NewArrayFrom`:
/// through rquickjs's typed setters each property and array element cost
/// twice as much.
fn query<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    sql: &str,
    p: Vec<DbValue>,
    origin: Origin,
) -> rquickjs::Result<Value<'js>> {
    let raw = ctx.as_raw().as_ptr();
    let mut owned = Owned {
        raw,
        rows: Vec::new(),
        atoms: Vec::new(),
        last: Vec::new(),
    };
    let mut js_error = None;
    let result = {
        let mut db = host.db.borrow_mut();
        owned.free_rows();
        db.query(sql, &p, origin, |cols, row| {
            let mut build = || -> rquickjs::Result<()> {
                if owned.atoms.is_empty() {
                    crate::shapes::keep_names(ctx, cols.iter());
                    for c in cols {
                        // SAFETY: a new atom reference, owned by `owned`.
                        let atom =
                            unsafe { qjs::JS_NewAtomLen(raw, c.as_ptr().cast(), c.len() as _) };
                        if atom == qjs::JS_ATOM_NULL {
                            return Err(rquickjs::Error::Exception);
                        }
                        owned.atoms.push(atom);
                    }
                    owned.last = vec![qjs::JS_NULL; owned.atoms.len()];
                }
                // SAFETY: a new object, owned by `owned` at once.
                let obj = unsafe { qjs::JS_NewObject(raw) };
                if unsafe { qjs::JS_IsException(obj) } {
                    return Err(rquickjs::Error::Exception);
                }
                owned.rows.push(obj);
                for (i, (&atom, last)) in owned.atoms.iter().zip(&mut owned.last).enumerate() {
                    let v = match row.get(i) {
                        ValueRef::Text(t) => text(ctx, t, last)?,
                        v => column(ctx, v)?,
                    };
                    // SAFETY: JS_SetProperty takes over `v`'s reference.
                    if unsafe { qjs::JS_SetProperty(raw, obj, atom, v) } < 0 {
                        return Err(rquickjs::Error::Exception);
                    }
                }
                Ok(())
            };
            build().map_err(|e| {
                js_error = Some(e);
                DbError::Callback("building the result failed".into())
            })
        })
    };
    if let Some(e) = js_error {
        return Err(e);
    }
    result.map_err(|e| db_error(ctx, "db.query failed", &e))?;
    let rows = std::mem::take(&mut owned.rows);
    // SAFETY: JS_NewArrayFrom takes over every row reference, even when it
    // fails; the array reference is ours, wrapped at once.
    let array = unsafe {
        let a = qjs::JS_NewArrayFrom(raw, rows.len() as _, rows.as_ptr());
        Value::from_raw(ctx.clone(), a)
    };
    if array.is_exception() {
        return Err(rquickjs::Error::Exception);
    }
    Ok(array)
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
            // SAFETY: `column` returns a new reference, owned by the wrapper.
            let v = unsafe { Value::from_raw(ctx.clone(), column(ctx, v.as_ref())?) };
            obj.set(name.as_str(), v)?;
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
