//! Query rows as JS objects (`db.query`). Each row is built with
//! `JS_SetProperty` on raw atoms and the array in one `JS_NewArrayFrom`:
//! through rquickjs's typed setters each property and array element cost
//! twice as much.
#![allow(unsafe_code)]

use rquickjs::{qjs, ArrayBuffer, Ctx, Value};

use cove_db::{Row, ValueRef};

use super::layout;

/// Rows being built: raw values and atoms owned here, freed on drop (a
/// failed query).
pub(crate) struct Rows<'a, 'js> {
    ctx: &'a Ctx<'js>,
    raw: *mut qjs::JSContext,
    rows: Vec<qjs::JSValue>,
    atoms: Vec<qjs::JSAtom>,
    /// Per column, the string value of the last row (a reference of ours;
    /// `JS_NULL` if none): a row whose text is the same reuses it.
    last: Vec<qjs::JSValue>,
}

impl<'a, 'js> Rows<'a, 'js> {
    pub(crate) fn new(ctx: &'a Ctx<'js>) -> Self {
        Rows {
            ctx,
            raw: ctx.as_raw().as_ptr(),
            rows: Vec::new(),
            atoms: Vec::new(),
            last: Vec::new(),
        }
    }

    /// Drop the rows built so far (a query that starts over).
    pub(crate) fn clear(&mut self) {
        for v in self.rows.drain(..) {
            // SAFETY: each row holds one reference, ours.
            unsafe { qjs::JS_FreeValue(self.raw, v) };
        }
    }

    /// Add `row`, whose columns are named `cols`.
    pub(crate) fn push(&mut self, cols: &[&str], row: &Row<'_>) -> rquickjs::Result<()> {
        let raw = self.raw;
        if self.atoms.is_empty() {
            super::shapes::keep_names(self.ctx, cols.iter());
            for c in cols {
                // SAFETY: a new atom reference, owned by `self`.
                let atom = unsafe { qjs::JS_NewAtomLen(raw, c.as_ptr().cast(), c.len() as _) };
                if atom == qjs::JS_ATOM_NULL {
                    return Err(rquickjs::Error::Exception);
                }
                self.atoms.push(atom);
            }
            self.last = vec![qjs::JS_NULL; self.atoms.len()];
        }
        // SAFETY: a new object, owned by `self` at once.
        let obj = unsafe { qjs::JS_NewObject(raw) };
        // SAFETY: reading the tag of the value just returned.
        if unsafe { qjs::JS_IsException(obj) } {
            return Err(rquickjs::Error::Exception);
        }
        self.rows.push(obj);
        for (i, (&atom, last)) in self.atoms.iter().zip(&mut self.last).enumerate() {
            let v = match row.get(i) {
                ValueRef::Text(t) => text(self.ctx, t, last)?,
                v => column(self.ctx, v)?,
            };
            // SAFETY: JS_SetProperty takes over `v`'s reference; `obj`
            // and `atom` are ours.
            if unsafe { qjs::JS_SetProperty(raw, obj, atom, v) } < 0 {
                return Err(rquickjs::Error::Exception);
            }
        }
        Ok(())
    }

    /// The rows as an array.
    pub(crate) fn finish(mut self) -> rquickjs::Result<Value<'js>> {
        let rows = std::mem::take(&mut self.rows);
        // SAFETY: JS_NewArrayFrom takes over every row reference, even when
        // it fails; the array reference is ours, wrapped at once.
        let array = unsafe {
            let a = qjs::JS_NewArrayFrom(self.raw, rows.len() as _, rows.as_ptr());
            Value::from_raw(self.ctx.clone(), a)
        };
        if array.is_exception() {
            return Err(rquickjs::Error::Exception);
        }
        Ok(array)
    }
}

impl Drop for Rows<'_, '_> {
    fn drop(&mut self) {
        self.clear();
        for v in self.last.drain(..) {
            // SAFETY: each kept string holds one reference, ours.
            unsafe { layout::free(self.raw, v) };
        }
        for a in self.atoms.drain(..) {
            // SAFETY: each atom holds one reference, ours.
            unsafe { qjs::JS_FreeAtom(self.raw, a) };
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
        if layout::ascii_bytes(*last) == Some(t) {
            return Ok(layout::dup(raw, *last));
        }
        let v = column(ctx, ValueRef::Text(t))?;
        layout::free(raw, *last);
        *last = layout::dup(raw, v);
        Ok(v)
    }
}
