//! One read-only view of a QuickJS value for every reader in the crate:
//! the JSON encoder (json.rs), the template renderer's data host
//! (template.rs) and the capability converter (caps.rs: `db` parameters
//! among the arguments).
//!
//! A [`Val`] owns one reference to a value and frees it on drop (the
//! layout.rs fast path: a plain decrement unless it is the last). Its
//! [`View`] reads the type and, for a scalar, the value, in place; a
//! string or an object is viewed through a borrow of the `Val` ([`Str`],
//! [`Obj`]), so whatever runs meanwhile (a getter, `toString`) cannot
//! free it. Everything that may run JS returns a new `Val` (or an
//! exception as `Error::Exception`, to be caught from the context).
#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;

use rquickjs::{qjs, Ctx, Value};

use super::layout;
pub(crate) use super::object::{Atom, Class, Keys, Obj, Prim, Slot};

/// A JS exception was thrown: it is pending in the context, to be caught
/// from it (`Ctx::catch`). Small, so that reads return in registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Thrown;

impl From<Thrown> for rquickjs::Error {
    #[inline]
    fn from(_: Thrown) -> Self {
        rquickjs::Error::Exception
    }
}

/// An owned reference to a value of context `'js`, freed on drop.
pub(crate) struct Val<'js> {
    pub(super) raw: *mut qjs::JSContext,
    pub(super) v: qjs::JSValue,
    pub(super) _js: PhantomData<Ctx<'js>>,
}

/// A value as Cove's readers see it, borrowed from the [`Val`] it was read
/// from.
#[derive(Clone, Copy)]
pub(crate) enum View<'a, 'js> {
    Undefined,
    Null,
    Bool(bool),
    Int(i32),
    Float(f64),
    Str(Str<'a, 'js>),
    Symbol,
    Object(Obj<'a, 'js>),
    /// BigInt, and anything else QuickJS may tag.
    Other,
}

/// A string value.
#[derive(Clone, Copy)]
pub(crate) struct Str<'a, 'js>(&'a Val<'js>);

impl<'js> Val<'js> {
    /// Own a reference the C API returned; an exception is `Err`.
    #[inline(always)]
    pub(super) fn own(raw: *mut qjs::JSContext, v: qjs::JSValue) -> Result<Val<'js>, Thrown> {
        // SAFETY: reading the tag of a value just returned.
        if unsafe { qjs::JS_VALUE_GET_TAG(v) } == qjs::JS_TAG_EXCEPTION {
            return Err(Thrown);
        }
        Ok(Val {
            raw,
            v,
            _js: PhantomData,
        })
    }

    /// A new reference to `v`.
    #[inline]
    pub(crate) fn of(v: &Value<'js>) -> Val<'js> {
        let raw = v.ctx().as_raw().as_ptr();
        Val {
            raw,
            // SAFETY: `v` is live; the new reference is ours.
            v: unsafe { layout::dup(raw, v.as_raw()) },
            _js: PhantomData,
        }
    }

    /// `v` itself, lent for as long as it is borrowed (no reference taken).
    #[inline]
    pub(crate) fn lend<'a>(v: &'a Value<'js>) -> Lent<'a, 'js> {
        Lent(
            ManuallyDrop::new(Val {
                raw: v.ctx().as_raw().as_ptr(),
                v: v.as_raw(),
                _js: PhantomData,
            }),
            PhantomData,
        )
    }

    /// A value QuickJS lent to a C function (an argument), lent on for as
    /// long as the borrow of `_lender` (no reference taken).
    ///
    /// # Safety
    /// `v` must be a live value of context `raw` for that long.
    #[inline]
    pub(super) unsafe fn lend_raw<'a, T: ?Sized>(
        _lender: &'a T,
        raw: *mut qjs::JSContext,
        v: qjs::JSValue,
    ) -> Lent<'a, 'js> {
        Lent(
            ManuallyDrop::new(Val {
                raw,
                v,
                _js: PhantomData,
            }),
            PhantomData,
        )
    }

    /// `undefined` (of `ctx`).
    #[inline]
    pub(crate) fn undefined(ctx: &Ctx<'js>) -> Val<'js> {
        Val {
            raw: ctx.as_raw().as_ptr(),
            v: qjs::JS_UNDEFINED,
            _js: PhantomData,
        }
    }

    /// The value as rquickjs's, sharing this reference.
    pub(crate) fn into_value(self, ctx: &Ctx<'js>) -> Value<'js> {
        let this = ManuallyDrop::new(self);
        // SAFETY: the Value takes over our reference (not freed here).
        unsafe { Value::from_raw(ctx.clone(), this.v) }
    }

    /// The value's type and scalar.
    #[inline(always)]
    pub(crate) fn view(&self) -> View<'_, 'js> {
        let v = self.v;
        // SAFETY: reading tag and payload of a live value of that tag.
        unsafe {
            match qjs::JS_VALUE_GET_TAG(v) {
                qjs::JS_TAG_INT => View::Int(qjs::JS_VALUE_GET_INT(v)),
                qjs::JS_TAG_FLOAT64 => View::Float(qjs::JS_VALUE_GET_FLOAT64(v)),
                qjs::JS_TAG_BOOL => View::Bool(qjs::JS_VALUE_GET_BOOL(v)),
                qjs::JS_TAG_NULL => View::Null,
                qjs::JS_TAG_UNDEFINED | qjs::JS_TAG_UNINITIALIZED => View::Undefined,
                qjs::JS_TAG_STRING | qjs::JS_TAG_STRING_ROPE => View::Str(Str(self)),
                qjs::JS_TAG_OBJECT => View::Object(Obj(self)),
                qjs::JS_TAG_SYMBOL => View::Symbol,
                _ => View::Other,
            }
        }
    }

    /// The identity of an object (its address, compared, never
    /// dereferenced); 0 for other values.
    #[inline]
    pub(crate) fn object_id(&self) -> usize {
        match self.view() {
            View::Object(o) => o.id(),
            _ => 0,
        }
    }

    /// A string's bytes in place when it is plain ASCII (its UTF-8 then);
    /// `None` for any other value.
    #[inline(always)]
    pub(crate) fn ascii(&self) -> Option<&[u8]> {
        // SAFETY: `self` is live while the bytes are borrowed (strings
        // never change).
        unsafe { layout::ascii_bytes(self.v) }
    }

    /// [`Val::ascii`], kept readable by a new reference to the string in
    /// `keep` (replacing what it held): the bytes then live as long as
    /// that borrow of `keep`, not of `self`.
    #[inline(always)]
    pub(crate) fn ascii_kept<'k>(&self, keep: &'k mut Option<Val<'js>>) -> Option<&'k [u8]> {
        let bytes = self.ascii()?;
        let (ptr, len) = (bytes.as_ptr(), bytes.len());
        *keep = Some(self.clone());
        // SAFETY: the bytes are the characters of the string `keep` now
        // holds a reference to; strings never change, and `keep` cannot be
        // replaced while the slice borrows it.
        Some(unsafe { std::slice::from_raw_parts(ptr, len) })
    }

    /// `String(v)`: may run a `toString`.
    pub(crate) fn to_js_string(&self) -> Result<Val<'js>, Thrown> {
        // SAFETY: a conversion of a live value; the result is owned.
        Val::own(self.raw, unsafe { qjs::JS_ToString(self.raw, self.v) })
    }

    /// The context's raw pointer (for raw/ only).
    #[inline(always)]
    pub(super) fn raw_ctx(&self) -> *mut qjs::JSContext {
        self.raw
    }
}

impl Clone for Val<'_> {
    #[inline]
    fn clone(&self) -> Self {
        Val {
            raw: self.raw,
            // SAFETY: `self` is live; the new reference is the clone's.
            v: unsafe { layout::dup(self.raw, self.v) },
            _js: PhantomData,
        }
    }
}

impl Drop for Val<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: each Val owns exactly one reference, freed once.
        unsafe { layout::free(self.raw, self.v) }
    }
}

/// A value lent from a `Value` (no reference of its own): see [`Val::lend`].
pub(crate) struct Lent<'a, 'js>(ManuallyDrop<Val<'js>>, PhantomData<&'a Value<'js>>);

impl<'js> Deref for Lent<'_, 'js> {
    type Target = Val<'js>;
    #[inline(always)]
    fn deref(&self) -> &Val<'js> {
        &self.0
    }
}

impl<'a, 'js> Str<'a, 'js> {
    /// The bytes in place when the string is plain ASCII.
    #[inline(always)]
    pub(crate) fn ascii(self) -> Option<&'a [u8]> {
        self.0.ascii()
    }

    /// The string as UTF-8 (lone surrogates come out as invalid UTF-8),
    /// converted by QuickJS.
    pub(crate) fn utf8(self) -> Result<Utf8<'a>, Thrown> {
        let raw = self.0.raw;
        let mut len = 0;
        // SAFETY: converting a live string; the buffer is freed by Utf8.
        let ptr = unsafe { qjs::JS_ToCStringLen2(raw, &mut len, self.0.v, false) };
        if ptr.is_null() {
            return Err(Thrown);
        }
        Ok(Utf8 {
            raw,
            ptr,
            len: len as usize,
            _s: PhantomData,
        })
    }

    /// The string as Rust text; an error if it has a lone surrogate
    /// (not UTF-8), as rquickjs's `String::to_string`.
    pub(crate) fn text(self) -> rquickjs::Result<String> {
        if let Some(b) = self.ascii() {
            // SAFETY: ASCII is valid UTF-8.
            return Ok(unsafe { std::str::from_utf8_unchecked(b) }.to_owned());
        }
        Ok(std::str::from_utf8(&self.utf8()?)?.to_owned())
    }
}

/// A string's UTF-8 from `JS_ToCStringLen2`, freed on drop.
pub(crate) struct Utf8<'a> {
    raw: *mut qjs::JSContext,
    ptr: *const std::ffi::c_char,
    len: usize,
    _s: PhantomData<&'a ()>,
}

impl Deref for Utf8<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: `len` bytes at `ptr`, alive until drop.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for Utf8<'_> {
    fn drop(&mut self) {
        // SAFETY: a C string from JS_ToCStringLen2, freed once.
        unsafe { qjs::JS_FreeCString(self.raw, self.ptr) }
    }
}

/// A new string of `bytes`, decoded by QuickJS (invalid UTF-8 becomes
/// U+FFFD).
pub(crate) fn new_string<'js>(
    ctx: &Ctx<'js>,
    bytes: &[u8],
) -> rquickjs::Result<rquickjs::String<'js>> {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: a new string from a byte buffer, owned at once.
    let v = Val::own(raw, unsafe {
        qjs::JS_NewStringLen(raw, bytes.as_ptr().cast(), bytes.len() as _)
    })?;
    v.into_value(ctx)
        .into_string()
        .ok_or(rquickjs::Error::Exception)
}

/// The address of a string value's QuickJS string (compared, never
/// dereferenced).
pub(crate) fn string_id(v: &Value<'_>) -> Option<usize> {
    // SAFETY: reading the payload of a live string value.
    v.is_string()
        .then(|| unsafe { qjs::JS_VALUE_GET_PTR(v.as_raw()) } as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_views_as_itself() {
        let rt = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&rt).unwrap();
        context.with(|ctx| {
            layout::probe(&ctx);
            let values: rquickjs::Array = ctx
                .eval("[undefined, null, true, 7, 2.5, 'ab', 'caf\\u00e9', Symbol('s'), {a: 1}, [1, 2], function () {}, 10n]")
                .unwrap();
            let mut names = Vec::new();
            for i in 0..values.len() {
                let v: Value = values.get(i).unwrap();
                let v = Val::of(&v);
                names.push(match v.view() {
                    View::Undefined => "undefined".to_string(),
                    View::Null => "null".into(),
                    View::Bool(b) => format!("bool {b}"),
                    View::Int(n) => format!("int {n}"),
                    View::Float(f) => format!("float {f}"),
                    View::Str(s) => format!("str {:?} {}", s.text().unwrap(), s.ascii().is_some()),
                    View::Symbol => "symbol".into(),
                    View::Object(o) => format!("object {:?} {}", o.class(), o.is_function()),
                    View::Other => "other".into(),
                });
            }
            assert_eq!(
                names,
                [
                    "undefined",
                    "null",
                    "bool true",
                    "int 7",
                    "float 2.5",
                    "str \"ab\" true",
                    "str \"café\" false",
                    "symbol",
                    "object Plain false",
                    "object Array false",
                    "object Other true",
                    "other",
                ]
            );
        });
    }
}
