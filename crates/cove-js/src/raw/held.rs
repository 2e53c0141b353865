//! Values kept across requests, used without new references.
//!
//! Through rquickjs, using a kept value (`Persistent::clone` then
//! `restore`) and calling a function take a value reference and a context
//! reference for every value involved, each freed again: ~25 instructions
//! a pair, ~10 pairs a handler call. A [`Held`] value keeps its reference
//! in its `Persistent` and hands out the raw value for as long as it is
//! borrowed, and [`call2`] calls a function on such values directly.
#![allow(unsafe_code)]

use std::marker::PhantomData;

use rquickjs::{qjs, Ctx, JsLifetime, Persistent, Value};

/// A persistent value and its raw value.
pub(crate) struct Held<T> {
    kept: Persistent<T>,
    raw: qjs::JSValue,
}

/// A held value's raw value, valid while the [`Held`] is borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Raw<'a>(qjs::JSValue, PhantomData<&'a ()>);

/// Keep `value`.
pub(crate) fn hold<'js, V>(ctx: &Ctx<'js>, value: V) -> Held<V::Changed<'static>>
where
    V: JsLifetime<'js> + AsRef<Value<'js>>,
{
    let raw = value.as_ref().as_raw();
    Held {
        kept: Persistent::save(ctx, value),
        raw,
    }
}

impl<T> Held<T> {
    pub(crate) fn raw(&self) -> Raw<'_> {
        Raw(self.raw, PhantomData)
    }

    pub(crate) fn persistent(&self) -> &Persistent<T> {
        &self.kept
    }
}

impl<T> Held<T>
where
    T: JsLifetime<'static> + Clone,
{
    /// Hold a value kept elsewhere (a handler the registry saved).
    pub(crate) fn from_persistent<'js>(ctx: &Ctx<'js>, kept: Persistent<T>) -> Held<T>
    where
        T::Changed<'js>: AsRef<Value<'js>>,
    {
        // Restoring a clone in the runtime it was saved in cannot fail; the
        // clone's reference is dropped, `kept` holds the value.
        let raw = kept
            .clone()
            .restore(ctx)
            .map_or(qjs::JS_UNDEFINED, |v| v.as_ref().as_raw());
        Held { kept, raw }
    }
}

/// A new object with prototype `proto`.
pub(crate) fn new_object<'js>(ctx: &Ctx<'js>, proto: Raw<'_>) -> rquickjs::Result<Value<'js>> {
    // SAFETY: `proto` is live while borrowed; the new reference is wrapped
    // at once.
    unsafe {
        let obj = qjs::JS_NewObjectProto(ctx.as_raw().as_ptr(), proto.0);
        if qjs::JS_IsException(obj) {
            return Err(rquickjs::Error::Exception);
        }
        Ok(Value::from_raw(ctx.clone(), obj))
    }
}

/// `f(a, b)` with `this` undefined; a thrown exception is
/// `Error::Exception`, to be caught from `ctx`.
pub(crate) fn call2<'js>(
    ctx: &Ctx<'js>,
    f: Raw<'_>,
    a: Raw<'_>,
    b: Raw<'_>,
) -> rquickjs::Result<Value<'js>> {
    let mut args = [a.0, b.0];
    // SAFETY: the three values are live while borrowed; JS_Call takes no
    // reference from them and returns a new one (or an exception), wrapped
    // at once.
    unsafe {
        let ret = qjs::JS_Call(
            ctx.as_raw().as_ptr(),
            f.0,
            qjs::JS_UNDEFINED,
            2,
            args.as_mut_ptr(),
        );
        if qjs::JS_IsException(ret) {
            return Err(rquickjs::Error::Exception);
        }
        Ok(Value::from_raw(ctx.clone(), ret))
    }
}
