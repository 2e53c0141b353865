//! `res:*` and `time.*` as plain Lua C functions.
//!
//! mlua's callback machinery (argument conversion through registry
//! references, panic and error wrapping) costs ~1k instructions per call; the
//! methods every handler calls are written against the Lua stack instead.
//! A failure becomes a message raised at the caller's line (as `error(msg,
//! 2)` from a Lua wrapper would) once every Rust value is dropped. The
//! response being built lives in a thread-local for the duration of one
//! handler call (each worker thread runs one Lua state, and calls are never
//! re-entered).
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::c_int;
use std::rc::Rc;

use mlua::{ffi, Lua, Table};

use cove_caps::{time, Csp};
use cove_core::Response;

use crate::bind::run_returning;
use crate::stack::encode_at;
use crate::view::{view, View};

struct Current {
    res: Response,
    csp: Rc<Csp>,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// Make `res` the response the `res:*` functions build, until [`end`].
pub(crate) fn begin(res: Response, csp: Rc<Csp>) {
    CURRENT.with(|c| *c.borrow_mut() = Some(Current { res, csp }));
}

/// Take back the response built since [`begin`].
pub(crate) fn end() -> Option<Response> {
    CURRENT.with(|c| c.borrow_mut().take().map(|cur| cur.res))
}

fn with_current<R>(
    api: &str,
    f: impl FnOnce(&mut Current) -> Result<R, String>,
) -> Result<R, String> {
    CURRENT.with(|c| match c.borrow_mut().as_mut() {
        Some(cur) => f(cur),
        None => Err(format!(
            "res:{api}: this response was already sent; use res only inside its own handler"
        )),
    })
}

/// Run `body`; on failure raise its message at the caller's line. Nothing
/// Rust owns is live when the message is pushed and raised, so the
/// `longjmp` of a Lua error skips no destructor. Returns 0 (no results).
unsafe fn run(state: *mut ffi::lua_State, body: impl FnOnce() -> Result<(), String>) -> c_int {
    run_returning(state, || body().map(|()| 0))
}

/// [`run`], then return the first argument (`res`, for chaining).
unsafe fn run_chained(
    state: *mut ffi::lua_State,
    body: impl FnOnce() -> Result<(), String>,
) -> c_int {
    run(state, body);
    ffi::lua_pushvalue(state, 1);
    1
}

/// An optional status code argument: integer, integral float or numeric string.
unsafe fn status_arg(
    state: *mut ffi::lua_State,
    idx: c_int,
    api: &str,
) -> Result<Option<i64>, String> {
    let bad = |what: String| format!("res:{api}: status must be an integer, got {what}");
    match view(state, idx) {
        View::Nil => Ok(None),
        View::Int(n) => Ok(Some(n)),
        View::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => Ok(Some(f as i64)),
        View::Float(f) => Err(bad(f.to_string())),
        View::Str(bytes) => {
            let text = String::from_utf8_lossy(bytes).into_owned();
            text.trim()
                .parse()
                .map(Some)
                .map_err(|_| bad(format!("{text:?}")))
        }
        other => Err(bad(other.type_name().to_string())),
    }
}

/// A string argument (numbers are formatted; nil is empty).
unsafe fn text_arg(
    state: *mut ffi::lua_State,
    idx: c_int,
    api: &str,
    what: &str,
) -> Result<Vec<u8>, String> {
    match view(state, idx) {
        View::Nil => Ok(Vec::new()),
        View::Str(bytes) => Ok(bytes.to_vec()),
        View::Int(n) => Ok(n.to_string().into_bytes()),
        View::Float(f) => Ok(f.to_string().into_bytes()),
        other => Err(format!(
            "res:{api}: {what} must be a string, got {}",
            other.type_name()
        )),
    }
}

fn utf8(bytes: Vec<u8>, api: &str, what: &str) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|_| format!("res:{api}: {what} is not valid UTF-8"))
}

unsafe extern "C-unwind" fn res_status(state: *mut ffi::lua_State) -> c_int {
    run_chained(state, || {
        let code = status_arg(state, 2, "status")?.ok_or("res:status: status code missing")?;
        with_current("status", |c| {
            c.res
                .set_status(code)
                .map_err(|e| format!("res:status: {e}"))
        })
    })
}

unsafe extern "C-unwind" fn res_header(state: *mut ffi::lua_State) -> c_int {
    run_chained(state, || {
        let name = utf8(
            text_arg(state, 2, "header", "the name")?,
            "header",
            "the name",
        )?;
        let value = utf8(
            text_arg(state, 3, "header", "the value")?,
            "header",
            "the value",
        )?;
        with_current("header", |c| {
            c.res
                .add_header(&name, &value)
                .map_err(|e| format!("res:header: {e}"))
        })
    })
}

unsafe extern "C-unwind" fn res_json(state: *mut ffi::lua_State) -> c_int {
    run(state, || {
        let code = status_arg(state, 3, "json")?;
        let body = encode_at(state, 2).map_err(|e| format!("res:json: {e}"))?;
        with_current("json", |c| {
            if let Some(code) = code {
                c.res
                    .set_status(code)
                    .map_err(|e| format!("res:json: {e}"))?;
            }
            c.res.json(body);
            Ok(())
        })
    })
}

unsafe extern "C-unwind" fn res_text(state: *mut ffi::lua_State) -> c_int {
    run(state, || {
        let body = text_arg(state, 2, "text", "the body")?;
        with_current("text", |c| {
            c.res.text(body);
            Ok(())
        })
    })
}

unsafe extern "C-unwind" fn res_html(state: *mut ffi::lua_State) -> c_int {
    run(state, || {
        let body = text_arg(state, 2, "html", "the body")?;
        with_current("html", |c| {
            let csp = c.csp.clone();
            c.res.html(body, csp.header());
            Ok(())
        })
    })
}

unsafe extern "C-unwind" fn res_redirect(state: *mut ffi::lua_State) -> c_int {
    run(state, || {
        let url = utf8(
            text_arg(state, 2, "redirect", "the URL")?,
            "redirect",
            "the URL",
        )?;
        let code = status_arg(state, 3, "redirect")?;
        with_current("redirect", |c| {
            c.res
                .redirect(&url, code)
                .map_err(|e| format!("res:redirect: {e}"))
        })
    })
}

/// `time.now` (0), `time.now_ms` (1) and `time.clock` (2).
unsafe extern "C-unwind" fn time_fn<const WHICH: u8>(state: *mut ffi::lua_State) -> c_int {
    let value = match WHICH {
        0 => time::now(),
        1 => time::now_ms(),
        _ => time::clock(),
    };
    ffi::lua_pushinteger(state, value);
    1
}

/// `time.date` (0) and `time.datetime` (1). The text is copied out of its
/// `String` before the push, which may raise a memory error: nothing Rust
/// owns is live then.
unsafe extern "C-unwind" fn time_text<const WHICH: u8>(state: *mut ffi::lua_State) -> c_int {
    let mut buf = [0u8; 32];
    let n = {
        let text = match WHICH {
            0 => time::date(),
            _ => time::datetime(),
        };
        let n = text.len().min(buf.len());
        buf[..n].copy_from_slice(&text.as_bytes()[..n]);
        n
    };
    ffi::lua_pushlstring(state, buf.as_ptr().cast(), n);
    1
}

/// The `res` methods.
pub(crate) fn res_functions(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let fns: [(&str, ffi::lua_CFunction); 6] = [
        ("status", res_status),
        ("header", res_header),
        ("json", res_json),
        ("text", res_text),
        ("html", res_html),
        ("redirect", res_redirect),
    ];
    for (name, f) in fns {
        // SAFETY: each function reads its arguments from the stack, pushes
        // at most one value, and raises only when no Rust value is live.
        t.raw_set(name, unsafe { lua.create_c_function(f)? })?;
    }
    Ok(t)
}

/// Add `now`, `now_ms`, `clock`, `date` and `datetime` to the `time` table.
pub(crate) fn add_time(lua: &Lua, t: &Table) -> mlua::Result<()> {
    let fns: [(&str, ffi::lua_CFunction); 5] = [
        ("now", time_fn::<0>),
        ("now_ms", time_fn::<1>),
        ("clock", time_fn::<2>),
        ("date", time_text::<0>),
        ("datetime", time_text::<1>),
    ];
    for (name, f) in fns {
        // SAFETY: pushing an integer cannot raise; `time_text` pushes its
        // string when no Rust value is live.
        t.raw_set(name, unsafe { lua.create_c_function(f)? })?;
    }
    Ok(())
}
