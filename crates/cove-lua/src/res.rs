//! `res:*` as plain Lua C functions.
//!
//! mlua's callback machinery (argument conversion through registry
//! references, panic and error wrapping) costs ~1k instructions per call; the
//! methods every handler calls are written against the Lua stack instead
//! (`raw::Stack`). A failure becomes a message raised at the caller's line
//! (as `error(msg, 2)` from a Lua wrapper would) once every Rust value is
//! dropped (raw/cfn.rs). The
//! response being built lives in a thread-local for the duration of one
//! handler call (each worker thread runs one Lua state, and calls are never
//! re-entered).

use std::cell::RefCell;
use std::ffi::c_int;
use std::rc::Rc;

use mlua::{Lua, Table};

use cove_caps::Csp;
use cove_core::{Response, WsCommand, WsEvent};

use crate::raw::json::encode_slot;
use crate::raw::{function, CFn, Stack, View};

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

/// An optional status code argument: integer, integral float or numeric string.
fn status_arg(s: &Stack<'_>, idx: c_int, api: &str) -> Result<Option<i64>, String> {
    let bad = |what: String| format!("res:{api}: status must be an integer, got {what}");
    match s.arg(idx) {
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
fn text_arg(s: &Stack<'_>, idx: c_int, api: &str, what: &str) -> Result<Vec<u8>, String> {
    match s.arg(idx) {
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

/// Return the first argument (`res`, for chaining).
fn chained(s: &mut Stack<'_>) -> Result<c_int, String> {
    s.push_value(1);
    Ok(1)
}

struct ResStatus;
impl CFn for ResStatus {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let code = status_arg(s, 2, "status")?.ok_or("res:status: status code missing")?;
        with_current("status", |c| {
            c.res
                .set_status(code)
                .map_err(|e| format!("res:status: {e}"))
        })?;
        chained(s)
    }
}

struct ResHeader;
impl CFn for ResHeader {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let name = utf8(text_arg(s, 2, "header", "the name")?, "header", "the name")?;
        let value = utf8(
            text_arg(s, 3, "header", "the value")?,
            "header",
            "the value",
        )?;
        with_current("header", |c| {
            c.res
                .add_header(&name, &value)
                .map_err(|e| format!("res:header: {e}"))
        })?;
        chained(s)
    }
}

struct ResJson;
impl CFn for ResJson {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let code = status_arg(s, 3, "json")?;
        let body = encode_slot(s, 2).map_err(|e| format!("res:json: {e}"))?;
        with_current("json", |c| {
            if let Some(code) = code {
                c.res
                    .set_status(code)
                    .map_err(|e| format!("res:json: {e}"))?;
            }
            c.res.json(body);
            Ok(0)
        })
    }
}

struct ResText;
impl CFn for ResText {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let body = text_arg(s, 2, "text", "the body")?;
        with_current("text", |c| {
            c.res.text(body);
            Ok(0)
        })
    }
}

struct ResHtml;
impl CFn for ResHtml {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let body = text_arg(s, 2, "html", "the body")?;
        with_current("html", |c| {
            let csp = c.csp.clone();
            c.res.html(body, csp.header());
            Ok(0)
        })
    }
}

struct ResRedirect;
impl CFn for ResRedirect {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let url = utf8(
            text_arg(s, 2, "redirect", "the URL")?,
            "redirect",
            "the URL",
        )?;
        let code = status_arg(s, 3, "redirect")?;
        with_current("redirect", |c| {
            c.res
                .redirect(&url, code)
                .map_err(|e| format!("res:redirect: {e}"))?;
            Ok(0)
        })
    }
}

/// What an event or a published message carries: a string as it is, a
/// number as text, anything else as JSON.
pub(crate) fn data_arg(s: &mut Stack<'_>, idx: c_int, api: &str) -> Result<Vec<u8>, String> {
    match s.arg(idx) {
        View::Str(bytes) => Ok(bytes.to_vec()),
        View::Int(n) => Ok(n.to_string().into_bytes()),
        View::Float(f) => Ok(cove_core::lua_float(f).into_bytes()),
        _ => encode_slot(s, idx).map_err(|e| format!("{api}: {e}")),
    }
}

/// An optional string argument.
fn opt_text(s: &Stack<'_>, idx: c_int, api: &str, what: &str) -> Result<Option<String>, String> {
    match s.arg(idx) {
        View::Nil => Ok(None),
        _ => utf8(text_arg(s, idx, api, what)?, api, what).map(Some),
    }
}

struct ResSubscribe;
impl CFn for ResSubscribe {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let topic = match s.arg(2) {
            View::Str(_) => utf8(
                text_arg(s, 2, "subscribe", "the topic")?,
                "subscribe",
                "the topic",
            )?,
            other => {
                return Err(format!(
                    "res:subscribe: the topic must be a string, got {}",
                    other.type_name()
                ))
            }
        };
        with_current("subscribe", |c| {
            c.res
                .subscribe(&topic)
                .map_err(|e| format!("res:subscribe: {e}"))
        })?;
        chained(s)
    }
}

struct ResEvent;
impl CFn for ResEvent {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let data = data_arg(s, 2, "res:event")?;
        let name = opt_text(s, 3, "event", "the name")?;
        let id = opt_text(s, 4, "event", "the id")?;
        let event = cove_core::event(name.as_deref(), id.as_deref(), &data)
            .map_err(|e| format!("res:event: {e}"))?;
        with_current("event", |c| {
            c.res.send_event(event);
            Ok(())
        })?;
        chained(s)
    }
}

/// `app.publish(topic, data)`: queued on the response in progress, sent
/// with it (cove-core events.rs).
struct AppPublish;
impl CFn for AppPublish {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let topic = match s.arg(1) {
            View::Str(t) => String::from_utf8_lossy(t).into_owned(),
            other => {
                return Err(format!(
                    "app.publish: the topic must be a string, got {}",
                    other.type_name()
                ))
            }
        };
        let data = data_arg(s, 2, "app.publish")?;
        CURRENT.with(|c| match c.borrow_mut().as_mut() {
            Some(cur) => cur
                .res
                .publish(&topic, data.into(), false)
                .map_err(|e| format!("app.publish: {e}")),
            None => Err(cove_core::PUBLISH_OUTSIDE_REQUEST.into()),
        })?;
        Ok(0)
    }
}

/// `app.publish`.
pub(crate) fn publish_function(lua: &Lua) -> mlua::Result<mlua::Function> {
    function::<AppPublish>(lua)
}

/// The `res` methods.
pub(crate) fn res_functions(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("status", function::<ResStatus>(lua)?)?;
    t.raw_set("header", function::<ResHeader>(lua)?)?;
    t.raw_set("json", function::<ResJson>(lua)?)?;
    t.raw_set("text", function::<ResText>(lua)?)?;
    t.raw_set("html", function::<ResHtml>(lua)?)?;
    t.raw_set("redirect", function::<ResRedirect>(lua)?)?;
    t.raw_set("subscribe", function::<ResSubscribe>(lua)?)?;
    t.raw_set("event", function::<ResEvent>(lua)?)?;
    Ok(t)
}

/// Queue `command` for connection `conn`, whose event must be the one in
/// progress (`ws:{api}`).
pub(crate) fn socket_command(api: &str, conn: u64, command: WsCommand) -> Result<(), String> {
    CURRENT
        .with(|c| match c.borrow_mut().as_mut() {
            Some(cur) => cur.res.socket_command(conn, command),
            None => Err(cove_core::WS_NOT_RUNNING.into()),
        })
        .map_err(|e| format!("ws:{api}: {e}"))
}

/// The WebSocket event in progress, if the call in progress handles one.
pub(crate) fn socket_event() -> Option<(u64, WsEvent)> {
    CURRENT.with(|c| {
        let c = c.borrow();
        let turn = c.as_ref()?.res.socket_turn()?;
        Some((turn.conn, turn.event.clone()))
    })
}
