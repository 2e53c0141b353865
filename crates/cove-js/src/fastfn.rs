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
        // SAFETY: `this` is alive for the call; the dup gives the Value its
        // own reference.
        unsafe { Value::from_raw(ctx.clone(), qjs::JS_DupValue(self.raw, self.this)) }
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

    /// Whether argument `i` is missing, `undefined` or `null`: checked
    /// without the owned value (and context reference) `get` makes.
    pub(crate) fn is_absent(&self, i: usize) -> bool {
        self.argv.get(i).is_none_or(|&v| {
            // SAFETY: reading the tag of a live argument.
            let tag = unsafe { qjs::JS_VALUE_GET_TAG(v) };
            tag == qjs::JS_TAG_UNDEFINED || tag == qjs::JS_TAG_NULL
        })
    }

    /// Argument `i` as an owned value (`undefined` when not passed).
    pub(crate) fn get<'js>(&self, ctx: &Ctx<'js>, i: usize) -> Value<'js> {
        match self.argv.get(i) {
            // SAFETY: the argument is alive for the call; the dup gives the
            // Value its own reference.
            Some(&v) => unsafe { Value::from_raw(ctx.clone(), qjs::JS_DupValue(self.raw, v)) },
            None => Value::new_undefined(ctx.clone()),
        }
    }
}

/// The identity (address) of an object value; 0 for other values.
pub(crate) fn identity(v: &Value<'_>) -> usize {
    if !v.is_object() {
        return 0;
    }
    // SAFETY: reading the payload of a live object value.
    unsafe { qjs::JS_VALUE_GET_PTR(v.as_raw()) as usize }
}

/// A fast method: what it is called, how many arguments it declares, and
/// whether it returns `this` (for chaining) or what `run` returns.
pub(crate) struct Method {
    pub(crate) name: &'static str,
    pub(crate) arity: c_int,
    pub(crate) chains: bool,
    pub(crate) run: for<'js> fn(&Ctx<'js>, &Args<'_>) -> rquickjs::Result<Value<'js>>,
}

/// The C entry of every table (see [`fast_table!`]): find the method by
/// `magic`, run it, map its outcome to what QuickJS expects.
///
/// # Safety
/// Called by QuickJS only, with its own arguments.
pub(crate) unsafe fn call<const N: usize>(
    ctx: *mut qjs::JSContext,
    this: qjs::JSValue,
    argc: c_int,
    argv: *mut qjs::JSValue,
    magic: c_int,
    table: &'static [Method; N],
) -> qjs::JSValue {
    let Some(method) = table.get(magic as usize) else {
        return qjs::JS_UNDEFINED;
    };
    let Some(ptr) = NonNull::new(ctx) else {
        return qjs::JS_EXCEPTION;
    };
    // SAFETY: QuickJS passes a live context and `argc` live arguments.
    let c = Ctx::from_raw(ptr);
    let argv: &[qjs::JSValue] = if argv.is_null() || argc <= 0 {
        &[]
    } else {
        std::slice::from_raw_parts(argv, argc as usize)
    };
    let args = Args {
        raw: ctx,
        this,
        argv,
        magic,
    };
    match catch_unwind(AssertUnwindSafe(|| (method.run)(&c, &args))) {
        Ok(Ok(_)) if method.chains => qjs::JS_DupValue(ctx, this),
        // The Value drops its own reference; QuickJS gets a new one.
        Ok(Ok(v)) => qjs::JS_DupValue(ctx, v.as_raw()),
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

/// Declare a table of methods and its C entry point:
/// `fast_table!(NAME, entry_fn, [Method, ...])`.
macro_rules! fast_table {
    ($table:ident, $entry:ident, [$($m:expr),* $(,)?]) => {
        pub(crate) static $table: [$crate::fastfn::Method; [$(stringify!($m)),*].len()] = [$($m),*];

        // SAFETY: only QuickJS calls it, with its own arguments.
        #[allow(unsafe_code)]
        unsafe extern "C" fn $entry(
            ctx: *mut rquickjs::qjs::JSContext,
            this: rquickjs::qjs::JSValue,
            argc: std::ffi::c_int,
            argv: *mut rquickjs::qjs::JSValue,
            magic: std::ffi::c_int,
        ) -> rquickjs::qjs::JSValue {
            unsafe { $crate::fastfn::call(ctx, this, argc, argv, magic, &$table) }
        }
    };
}
pub(crate) use fast_table;

/// The C entry point of a table, as QuickJS wants it.
pub(crate) type Entry = unsafe extern "C" fn(
    *mut qjs::JSContext,
    qjs::JSValue,
    c_int,
    *mut qjs::JSValue,
    c_int,
) -> qjs::JSValue;

/// Put every method of `table` on `obj` as a C function calling `entry`.
pub(crate) fn install<'js>(
    obj: &Object<'js>,
    table: &'static [Method],
    entry: Entry,
) -> rquickjs::Result<()> {
    let ctx = obj.ctx();
    let raw = ctx.as_raw().as_ptr();
    for (magic, m) in table.iter().enumerate() {
        let name =
            CString::new(m.name).map_err(|_| rquickjs::Error::new_from_js("name", "C string"))?;
        // SAFETY: QuickJS calls a `generic_magic` function with the magic
        // signature (quickjs.h `JSCFunctionType`); the name is copied.
        let f = unsafe {
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
                m.arity,
                qjs::JSCFunctionEnum_JS_CFUNC_generic_magic,
                magic as c_int,
            );
            if qjs::JS_VALUE_GET_TAG(v) == qjs::JS_TAG_EXCEPTION {
                return Err(rquickjs::Error::Exception);
            }
            Value::from_raw(ctx.clone(), v)
        };
        let short = m.name.rsplit('.').next().unwrap_or(m.name);
        obj.set(short, f)?;
    }
    Ok(())
}
