//! `res:*`, `ws:*` and `app.publish` on the response in progress: their
//! arguments checked and their messages made here, for both runtimes. A
//! `ws` method queues a command for its connection, which must be the one
//! whose event is being handled (its id read by the binding's reader,
//! [`ArgReader::connection`]).
//!
//! They run on every request, so they read their arguments where they lie
//! ([`ArgReader`], implemented by each binding over its own frame) rather
//! than as [`CapValue`]s: built, matched and dropped as values, a
//! `res:status` call cost ~400 instructions more than its hand-bound form
//! (docs/benchmarks.md).
//!
//! The response lives in a thread-local for one call of a script ([`begin`]
//! to [`end`]): each worker thread runs one VM, calls never overlap, and
//! the runtime's plain C functions reach it with no captured state.

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

use cove_core::{CapError, Response, WsCommand};

use super::{CapValue, Runtime};
use crate::response::{ResFn, ResOp, WEBSOCKET};
use crate::Csp;

struct Current {
    /// While lent ([`begin`]), the response the functions build; between
    /// calls, the empty one the caller's slot held meanwhile.
    res: Response,
    csp: Option<Rc<Csp>>,
    /// A call is in progress: [`begin`] ran and [`end`] did not yet.
    lent: bool,
}

thread_local! {
    static CURRENT: RefCell<Current> = const {
        RefCell::new(Current { res: Response::new(), csp: None, lent: false })
    };
}

/// Lend `res` to the functions until [`end`]: swapped with the slot they
/// build on, so no response is made, moved out or dropped per call (the
/// slot's took ~190 instructions a request, measured). Calls do not nest
/// (one VM a thread); a call a panic left lent is over once this runs.
pub fn begin(res: &mut Response, csp: &Rc<Csp>) {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        std::mem::swap(&mut c.res, res);
        if !c.csp.as_ref().is_some_and(|p| Rc::ptr_eq(p, csp)) {
            c.csp = Some(csp.clone());
        }
        c.lent = true;
    })
}

/// Give back the response lent at [`begin`], as the functions left it;
/// false when none was lent.
pub fn end(res: &mut Response) -> bool {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        if !c.lent {
            return false;
        }
        c.lent = false;
        std::mem::swap(&mut c.res, res);
        true
    })
}

/// Run `f` on the response in progress, if a call is in progress (the
/// bindings read a WebSocket event from it).
pub fn with_response<R>(f: impl FnOnce(&mut Response) -> R) -> Option<R> {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        c.lent.then(|| f(&mut c.res))
    })
}

/// The function as the script called it (`res:json`, `res.json`,
/// `ws:send`, `app.publish`), for messages; formatted only when one is
/// written.
#[derive(Clone, Copy)]
struct Called(&'static ResFn, Runtime);

impl std::fmt::Display for Called {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let object = self.code("res", "ws", "app");
        match (self.0.is_method(), self.1) {
            (true, Runtime::Lua) => write!(f, "{object}:{}", self.0.name),
            _ => write!(f, "{object}.{}", self.0.name),
        }
    }
}

impl Called {
    /// One of three, by the object called: `res`, a connection's `ws`, or
    /// `app` (a code of its module: `res.argument`, `ws.argument`,
    /// `app.argument`).
    fn code(self, res: &'static str, ws: &'static str, app: &'static str) -> &'static str {
        match self.0.of {
            None => app,
            Some(WEBSOCKET) => ws,
            Some(_) => res,
        }
    }

    /// An argument of the wrong type (JS: a `TypeError`).
    fn argument(self, msg: String) -> CapError {
        CapError::new(
            self.code("res.argument", "ws.argument", "app.argument"),
            msg,
        )
    }

    /// A value the response refuses (a status out of range, a header name
    /// with a newline, a topic too long, a close code not sendable).
    fn invalid(self, reason: impl std::fmt::Display) -> CapError {
        CapError::new(
            self.code("res.invalid", "ws.invalid", "app.invalid"),
            format!("{self}: {reason}"),
        )
    }
}

/// A scalar argument as a reader sees it, its text borrowed where it lies.
pub enum Scalar<'a> {
    /// Lua `nil`, JS `undefined`, or not passed.
    Absent,
    /// JS `null`.
    Null,
    Bool(bool),
    Int(i64),
    Num(f64),
    Str(Cow<'a, [u8]>),
    /// Anything else: its type as the runtime names it.
    Other(&'static str),
}

impl Scalar<'_> {
    fn type_name(&self, rt: Runtime) -> &'static str {
        match self {
            Scalar::Absent if rt == Runtime::Lua => "nil",
            Scalar::Absent => "undefined",
            Scalar::Null => "null",
            Scalar::Bool(_) => "boolean",
            Scalar::Int(_) | Scalar::Num(_) => "number",
            Scalar::Str(_) => "string",
            Scalar::Other(name) => name,
        }
    }
}

/// A call's arguments (from 0, a method's object not among them), read in
/// place by the binding that made the call.
pub trait ArgReader {
    /// Argument `i` as a scalar.
    fn scalar(&mut self, i: usize) -> Scalar<'_>;
    /// Argument `i` as JSON text, by the runtime's encoder; the reason it
    /// cannot be.
    fn json(&mut self, i: usize) -> Result<Vec<u8>, String>;
    /// Argument `i` as a message's data, and whether it is binary: a
    /// string as it is, a number as the runtime writes it, JS binary data
    /// as binary, anything else as its JSON.
    fn data(&mut self, i: usize) -> Result<(Vec<u8>, bool), String>;
    /// Argument `i` when it is the page `template.render` made last (JS
    /// hands its bytes over instead of converting the string back).
    fn page(&mut self, _i: usize) -> Option<String> {
        None
    }
    /// The connection a `ws` method was called on (its object's `id`);
    /// `None` when the object is not a connection's.
    fn connection(&mut self) -> Option<u64> {
        None
    }
}

/// The reader of arguments given as values (`CapFn::start`, tests); a `ws`
/// method's first value is its connection's id.
pub(super) struct Values<'a>(&'a [CapValue], Runtime, Option<u64>);

impl<'a> Values<'a> {
    pub(super) fn of(f: &ResFn, args: &'a [CapValue], rt: Runtime) -> Self {
        match (f.is_socket(), args) {
            (true, [CapValue::Int(id), rest @ ..]) => Values(rest, rt, u64::try_from(*id).ok()),
            (true, [_, rest @ ..]) => Values(rest, rt, None),
            _ => Values(args, rt, None),
        }
    }
}

impl ArgReader for Values<'_> {
    fn connection(&mut self) -> Option<u64> {
        self.2
    }

    fn scalar(&mut self, i: usize) -> Scalar<'_> {
        match self.0.get(i).unwrap_or(&CapValue::Nothing) {
            CapValue::Nothing => Scalar::Absent,
            CapValue::Null => Scalar::Null,
            CapValue::Bool(b) => Scalar::Bool(*b),
            CapValue::Int(n) => Scalar::Int(*n),
            CapValue::Num(n) => Scalar::Num(*n),
            CapValue::Str(b) => Scalar::Str(Cow::Borrowed(b)),
            other => Scalar::Other(other.type_name(self.1)),
        }
    }

    fn json(&mut self, i: usize) -> Result<Vec<u8>, String> {
        let v = self.0.get(i).unwrap_or(&CapValue::Null);
        Ok(v.to_json().to_string().into_bytes())
    }

    fn data(&mut self, i: usize) -> Result<(Vec<u8>, bool), String> {
        Ok(match self.0.get(i) {
            Some(CapValue::Str(b)) => (b.clone(), false),
            Some(CapValue::Bytes(b)) => (b.clone(), true),
            _ => (self.json(i)?, false),
        })
    }
}

/// Do `f`'s work on the response in progress.
pub fn run<R: ArgReader + ?Sized>(
    f: &'static ResFn,
    rt: Runtime,
    args: &mut R,
) -> Result<(), CapError> {
    let called = Called(f, rt);
    match f.op {
        ResOp::Status => {
            let code = status(called, args.scalar(0))?
                .ok_or_else(|| called.argument(format!("{called}: status code missing")))?;
            on_current(called, |c| {
                c.res.set_status(code).map_err(|e| called.invalid(e))
            })
        }
        ResOp::Header => {
            let name = utf8(
                called,
                "the name",
                text(called, "the name", args.scalar(0))?,
            )?;
            let value = utf8(
                called,
                "the value",
                text(called, "the value", args.scalar(1))?,
            )?;
            on_current(called, |c| {
                c.res
                    .add_header(&name, &value)
                    .map_err(|e| called.invalid(e))
            })
        }
        ResOp::Json => {
            let code = status(called, args.scalar(1))?;
            let body = args.json(0).map_err(|e| encode_failed(called, e))?;
            on_current(called, |c| {
                if let Some(code) = code {
                    c.res.set_status(code).map_err(|e| called.invalid(e))?;
                }
                c.res.json(body);
                Ok(())
            })
        }
        ResOp::Text => {
            let body = text(called, "the body", args.scalar(0))?;
            on_current(called, |c| {
                c.res.text(body);
                Ok(())
            })
        }
        ResOp::Html => {
            let body = match args.page(0) {
                Some(page) => page.into_bytes(),
                None => text(called, "the body", args.scalar(0))?,
            };
            on_current(called, |c| {
                let csp = c.csp.clone();
                c.res.html(body, csp.as_deref().and_then(Csp::header));
                Ok(())
            })
        }
        ResOp::Redirect => {
            let url = utf8(called, "the URL", text(called, "the URL", args.scalar(0))?)?;
            let code = status(called, args.scalar(1))?;
            on_current(called, |c| {
                c.res.redirect(&url, code).map_err(|e| called.invalid(e))
            })
        }
        ResOp::Subscribe => {
            let topic = topic(called, args.scalar(0))?;
            on_current(called, |c| {
                c.res.subscribe(&topic).map_err(|e| called.invalid(e))
            })
        }
        ResOp::Event => {
            let (data, _) = args.data(0).map_err(|e| encode_failed(called, e))?;
            let name = opt_text(called, "the name", args.scalar(1))?;
            let id = opt_text(called, "the id", args.scalar(2))?;
            let event = cove_core::event(name.as_deref(), id.as_deref(), &data)
                .map_err(|e| called.invalid(e))?;
            on_current(called, |c| {
                c.res.send_event(event);
                Ok(())
            })
        }
        ResOp::Publish => {
            let topic = topic(called, args.scalar(0))?;
            let (data, binary) = args.data(1).map_err(|e| encode_failed(called, e))?;
            let published = with_response(|res| res.publish(&topic, data.into(), binary))
                .ok_or_else(|| CapError::new("app.ended", cove_core::PUBLISH_OUTSIDE_REQUEST))?;
            published.map_err(|e| called.invalid(e))
        }
        ResOp::Send => {
            let conn = connection(called, args)?;
            let (data, binary) = args.data(0).map_err(|e| encode_failed(called, e))?;
            let as_binary = matches!(args.scalar(1), Scalar::Bool(true));
            let data = data.into();
            let binary = binary || as_binary;
            socket(called, conn, WsCommand::Send { data, binary })
        }
        ResOp::Close => {
            let conn = connection(called, args)?;
            let code = close_code(called, args.scalar(0))?;
            let reason = opt_text(called, "the reason", args.scalar(1))?.unwrap_or_default();
            let close = WsCommand::close(code, &reason).map_err(|e| called.invalid(e))?;
            socket(called, conn, close)
        }
        ResOp::Join => {
            let conn = connection(called, args)?;
            let topic = topic(called, args.scalar(0))?;
            let join = WsCommand::subscribe(&topic).map_err(|e| called.invalid(e))?;
            socket(called, conn, join)
        }
        ResOp::Leave => {
            let conn = connection(called, args)?;
            let topic = topic(called, args.scalar(0))?;
            socket(called, conn, WsCommand::Unsubscribe(topic))
        }
    }
}

/// The connection a `ws` method was called on.
fn connection<R: ArgReader + ?Sized>(called: Called, args: &mut R) -> Result<u64, CapError> {
    args.connection().ok_or_else(|| {
        let how = match called.1 {
            Runtime::Lua => format!("with a colon: {called}(...)"),
            Runtime::Js => format!("({called}(...))"),
        };
        called.argument(format!(
            "{called}: call it on a connection's ws object {how}"
        ))
    })
}

/// Queue `command` for connection `conn`, whose event must be the one in
/// progress.
fn socket(called: Called, conn: u64, command: WsCommand) -> Result<(), CapError> {
    let not_running = || {
        let msg = format!("{called}: {}", cove_core::WS_NOT_RUNNING);
        CapError::new("ws.ended", msg)
    };
    match with_response(|res| res.socket_command(conn, command)) {
        None => Err(not_running()),
        Some(Err(e)) if e == cove_core::WS_NOT_RUNNING => Err(not_running()),
        Some(Err(e)) => Err(called.invalid(e)),
        Some(Ok(())) => Ok(()),
    }
}

/// A close code: 1000 when absent; a number out of a code's range is 0,
/// which [`WsCommand::close`] refuses with the codes it takes.
fn close_code(called: Called, v: Scalar<'_>) -> Result<u16, CapError> {
    match v {
        Scalar::Absent => Ok(1000),
        Scalar::Int(n) => Ok(u16::try_from(n).unwrap_or(0)),
        Scalar::Num(f) if f.fract() == 0.0 && (0.0..=65535.0).contains(&f) => Ok(f as u16),
        Scalar::Num(_) => Ok(0),
        other => Err(called.argument(format!(
            "{called}: the code must be an integer, got {}",
            other.type_name(called.1)
        ))),
    }
}

/// A value the runtime's JSON encoder refused (a cycle, a function).
fn encode_failed(called: Called, reason: String) -> CapError {
    CapError::new("json.encode", format!("{called}: {reason}"))
}

/// Run `f` on the call in progress, or fail: the script kept `res` past
/// its own handler.
fn on_current(
    called: Called,
    f: impl FnOnce(&mut Current) -> Result<(), CapError>,
) -> Result<(), CapError> {
    CURRENT.with(|c| match &mut *c.borrow_mut() {
        cur if cur.lent => f(cur),
        _ => Err(CapError::new(
            "res.ended",
            format!("{called}: this request has ended; use res only inside its own handler"),
        )),
    })
}

/// An optional status code: an integer, a whole number or a numeric string.
/// Inlined for the usual two (none, an integer), on every `res:json`.
#[inline]
fn status(called: Called, v: Scalar<'_>) -> Result<Option<i64>, CapError> {
    match v {
        // JS `null` too: what a caller passes for "no status".
        Scalar::Absent | Scalar::Null => Ok(None),
        Scalar::Int(n) => Ok(Some(n)),
        other => status_of(called, other),
    }
}

/// [`status`] of anything else.
fn status_of(called: Called, v: Scalar<'_>) -> Result<Option<i64>, CapError> {
    let bad =
        |what: String| called.argument(format!("{called}: status must be an integer, got {what}"));
    match v {
        Scalar::Absent | Scalar::Null => Ok(None),
        Scalar::Int(n) => Ok(Some(n)),
        Scalar::Num(f) if f.fract() == 0.0 && f.abs() < 1e15 => Ok(Some(f as i64)),
        Scalar::Num(f) => Err(bad(number_text(called.1, f))),
        Scalar::Str(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            text.trim()
                .parse()
                .map(Some)
                .map_err(|_| bad(format!("{text:?}")))
        }
        other => Err(bad(other.type_name(called.1).to_string())),
    }
}

/// A number as the runtime writes it.
fn number_text(rt: Runtime, f: f64) -> String {
    match rt {
        Runtime::Lua => cove_core::lua_float(f),
        Runtime::Js => cove_core::js_number(f),
    }
}

/// Text: a string as it is, a number as the runtime writes it, nothing as
/// empty.
fn text(called: Called, what: &str, v: Scalar<'_>) -> Result<Vec<u8>, CapError> {
    match v {
        Scalar::Str(bytes) => Ok(bytes.into_owned()),
        Scalar::Absent | Scalar::Null => Ok(Vec::new()),
        Scalar::Int(n) => Ok(n.to_string().into_bytes()),
        Scalar::Num(f) => Ok(number_text(called.1, f).into_bytes()),
        other => Err(called.argument(format!(
            "{called}: {what} must be a string, got {}",
            other.type_name(called.1)
        ))),
    }
}

/// Text that is left out when absent.
fn opt_text(called: Called, what: &str, v: Scalar<'_>) -> Result<Option<String>, CapError> {
    match v {
        Scalar::Absent | Scalar::Null => Ok(None),
        v => utf8(called, what, text(called, what, v)?).map(Some),
    }
}

/// Text that must be UTF-8 (a Lua string may hold any bytes).
fn utf8(called: Called, what: &str, bytes: Vec<u8>) -> Result<String, CapError> {
    String::from_utf8(bytes).map_err(|_| called.invalid(format!("{what} is not valid UTF-8")))
}

/// A topic: a string, nothing else.
fn topic(called: Called, v: Scalar<'_>) -> Result<String, CapError> {
    match v {
        Scalar::Str(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        other => Err(called.argument(format!(
            "{called}: the topic must be a string, got {}",
            other.type_name(called.1)
        ))),
    }
}
