//! Native methods called on every request, as plain QuickJS C functions.
//!
//! rquickjs wraps each Rust closure in a class instance and converts its
//! arguments generically, ~800 instructions per call; a JSON route calls
//! `res.json` on every request. These trampolines dispatch by the C
//! function's `magic` number to a safe Rust function instead.
#![allow(unsafe_code)]

use std::ffi::{c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use rquickjs::{qjs, Ctx, Exception, Object, Value};

use super::value::{Lent, Val};

/// The arguments of one call, borrowed from QuickJS.
pub(crate) struct Args<'a> {
    raw: *mut qjs::JSContext,
    this: qjs::JSValue,
    argv: &'a [qjs::JSValue],
    magic: c_int,
}

impl Args<'_> {
    /// `this` as an owned value.
    pub(crate) fn this<'js>(&self, ctx: &Ctx<'js>) -> Value<'js> {
        if !self.of(ctx) {
            return Value::new_undefined(ctx.clone());
        }
        // SAFETY: `this` is alive for the call, a value of `ctx` (checked);
        // the dup gives the Value its own reference.
        unsafe { Value::from_raw(ctx.clone(), qjs::JS_DupValue(self.raw, self.this)) }
    }

    /// Whether `ctx` is the context of the call (the one `run` was given).
    #[inline(always)]
    fn of(&self, ctx: &Ctx<'_>) -> bool {
        ctx.as_raw().as_ptr() == self.raw
    }

    /// The identity of `this` (its address; compared, never dereferenced).
    pub(crate) fn this_id(&self) -> usize {
        // SAFETY: reading the payload of a live value.
        unsafe { qjs::JS_VALUE_GET_PTR(self.this) as usize }
    }

    /// Which entry of its table the method is (for tables of look-alikes).
    pub(crate) fn magic(&self) -> usize {
        self.magic as usize
    }

    /// How many arguments were passed.
    pub(crate) fn len(&self) -> usize {
        self.argv.len()
    }

    /// Argument `i` lent for the call, no reference taken (`None` when not
    /// passed): read in place, as `res`'s methods read theirs.
    pub(crate) fn lend<'js>(&self, ctx: &Ctx<'js>, i: usize) -> Option<Lent<'_, 'js>> {
        match self.argv.get(i) {
            // SAFETY: the argument is alive for the call, a value of `ctx`
            // (checked), and the lent value lives no longer than `self`.
            Some(&v) if self.of(ctx) => Some(unsafe { Val::lend_raw(self, self.raw, v) }),
            _ => None,
        }
    }

    /// Argument `i` as an owned value (`undefined` when not passed).
    pub(crate) fn get<'js>(&self, ctx: &Ctx<'js>, i: usize) -> Value<'js> {
        match self.argv.get(i) {
            // SAFETY: the argument is alive for the call, a value of `ctx`
            // (checked); the dup gives the Value its own reference.
            Some(&v) if self.of(ctx) => unsafe {
                Value::from_raw(ctx.clone(), qjs::JS_DupValue(self.raw, v))
            },
            _ => Value::new_undefined(ctx.clone()),
        }
    }
}

/// A fast method: what it is called, how many arguments it declares, and
/// whether it returns `this` (for chaining) or what `run` returns.
pub(crate) struct Method {
    pub(crate) name: &'static str,
    pub(crate) arity: c_int,
    pub(crate) chains: bool,
    pub(crate) run: for<'js> fn(&Ctx<'js>, &Args<'_>) -> rquickjs::Result<Value<'js>>,
}

/// A table of fast methods, declared with [`fast_table!`]; the magic
/// number of each C function is its index here, unless the table says
/// otherwise ([`Table::method`]).
pub(crate) trait Table: 'static {
    const METHODS: &'static [Method];

    /// The method a C function of this table with `magic` runs. A table
    /// may keep the magic for its method's own use (`Args::magic`): one
    /// method bound under several names, each with its own number.
    fn method(magic: usize) -> Option<&'static Method> {
        Self::METHODS.get(magic)
    }
}

/// The C entry of every table: find the method by `magic`, run it, map
/// its outcome to what QuickJS expects.
///
/// # Safety
/// Called by QuickJS only, with its own arguments.
unsafe extern "C" fn entry<T: Table>(
    ctx: *mut qjs::JSContext,
    this: qjs::JSValue,
    argc: c_int,
    argv: *mut qjs::JSValue,
    magic: c_int,
) -> qjs::JSValue {
    let Some(method) = T::method(magic as usize) else {
        return qjs::JS_UNDEFINED;
    };
    let Some(ptr) = NonNull::new(ctx) else {
        return qjs::JS_EXCEPTION;
    };
    // SAFETY: QuickJS passes a live context and `argc` live arguments.
    let c = unsafe { Ctx::from_raw(ptr) };
    let argv: &[qjs::JSValue] = if argv.is_null() || argc <= 0 {
        &[]
    } else {
        // SAFETY: as above: `argc` values at `argv`, alive for the call.
        unsafe { std::slice::from_raw_parts(argv, argc as usize) }
    };
    let args = Args {
        raw: ctx,
        this,
        argv,
        magic,
    };
    // SAFETY (each arm): `this` is alive for the call; the dup is the
    // reference QuickJS takes from us as the return value.
    match catch_unwind(AssertUnwindSafe(|| (method.run)(&c, &args))) {
        Ok(Ok(_)) if method.chains => unsafe { qjs::JS_DupValue(ctx, this) },
        // The Value drops its own reference; QuickJS gets a new one.
        // SAFETY: `v` is live until it drops, after the dup.
        Ok(Ok(v)) => unsafe { qjs::JS_DupValue(ctx, v.as_raw()) },
        Ok(Err(rquickjs::Error::Exception)) => qjs::JS_EXCEPTION,
        Ok(Err(other)) => {
            Exception::throw_message(&c, &format!("{}: {other}", method.name));
            qjs::JS_EXCEPTION
        }
        Err(_) => {
            Exception::throw_internal(&c, &format!("{}: internal error", method.name));
            qjs::JS_EXCEPTION
        }
    }
}

/// Declare a table of methods: `fast_table!(NAME, [Method, ...])` makes
/// the type `NAME`, to [`install`] as `install::<NAME>(&obj)`.
macro_rules! fast_table {
    ($table:ident, [$($m:expr),* $(,)?]) => {
        pub(crate) struct $table;

        impl $crate::raw::fastfn::Table for $table {
            const METHODS: &'static [$crate::raw::fastfn::Method] = &[$($m),*];
        }
    };
}
pub(crate) use fast_table;

/// The C entry point of a table, as QuickJS wants it.
type Entry = unsafe extern "C" fn(
    *mut qjs::JSContext,
    qjs::JSValue,
    c_int,
    *mut qjs::JSValue,
    c_int,
) -> qjs::JSValue;

/// Put every method of table `T` on `obj` as a C function.
pub(crate) fn install<'js, T: Table>(obj: &Object<'js>) -> rquickjs::Result<()> {
    for (magic, m) in T::METHODS.iter().enumerate() {
        let short = m.name.rsplit('.').next().unwrap_or(m.name);
        obj.set(short, new_function::<T>(obj.ctx(), m.name, m.arity, magic)?)?;
    }
    Ok(())
}

/// The method `magic` of table `T` picks ([`Table::method`]) as a C
/// function named `name` with that magic number.
pub(crate) fn function_with_magic<'js, T: Table>(
    ctx: &Ctx<'js>,
    name: &str,
    magic: usize,
) -> rquickjs::Result<Value<'js>> {
    let m = T::method(magic).ok_or_else(|| rquickjs::Error::new_from_js("magic", "a method"))?;
    new_function::<T>(ctx, name, m.arity, magic)
}

fn new_function<'js, T: Table>(
    ctx: &Ctx<'js>,
    name: &str,
    arity: c_int,
    magic: usize,
) -> rquickjs::Result<Value<'js>> {
    let entry: Entry = entry::<T>;
    let raw = ctx.as_raw().as_ptr();
    let name = CString::new(name).map_err(|_| rquickjs::Error::new_from_js("name", "C string"))?;
    // QuickJS keeps a function's magic number in 16 bits (truncating more).
    let magic = i16::try_from(magic)
        .map(c_int::from)
        .map_err(|_| rquickjs::Error::new_from_js("magic", "a 16-bit int"))?;
    // SAFETY: QuickJS calls a `generic_magic` function with the magic
    // signature (quickjs.h `JSCFunctionType`); the name is copied.
    unsafe {
        let generic: qjs::JSCFunction = Some(std::mem::transmute::<
            Entry,
            unsafe extern "C" fn(
                *mut qjs::JSContext,
                qjs::JSValue,
                c_int,
                *mut qjs::JSValue,
            ) -> qjs::JSValue,
        >(entry));
        let v = qjs::JS_NewCFunction2(
            raw,
            generic,
            name.as_ptr(),
            arity,
            qjs::JSCFunctionEnum_JS_CFUNC_generic_magic,
            magic,
        );
        if qjs::JS_VALUE_GET_TAG(v) == qjs::JS_TAG_EXCEPTION {
            return Err(rquickjs::Error::Exception);
        }
        Ok(Value::from_raw(ctx.clone(), v))
    }
}
