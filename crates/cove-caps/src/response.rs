//! What a handler sends (Hull §4.2; the live updates of docs/protocols.md):
//! `res`'s methods, a WebSocket connection's (`ws:send`, docs/protocols.md)
//! and `app.publish`, declared once for the capability table
//! ([`crate::cap`], whose adapter cap/res.rs does them on the response in
//! progress) and the API catalog (api/app.rs). A `ws` method's connection is
//! the object it is called on, read by the binding's argument reader.

use crate::sig::{opt, p, Param, Ty};

/// What a function does to the response in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResOp {
    Status,
    Header,
    Json,
    Text,
    Html,
    Redirect,
    Subscribe,
    Event,
    /// `app.publish`: a message queued on the response, sent when its
    /// writes commit.
    Publish,
    /// `ws:send`, `ws:close`, `ws:subscribe`, `ws:unsubscribe`: commands
    /// for the connection whose event is being handled.
    Send,
    Close,
    Join,
    Leave,
}

/// One function, the same name in Lua and JS: a method of `res` (Lua
/// `res:json(...)`, JS `res.json(...)`) or of `ws`, or `app.publish`.
pub struct ResFn {
    pub name: &'static str,
    /// The type whose method it is ([`RESPONSE`], [`WEBSOCKET`]); `None`
    /// for a function of `app`.
    pub of: Option<&'static str>,
    pub op: ResOp,
    pub params: &'static [Param],
    pub ret: Ty,
    pub doc: &'static str,
}

/// The types whose methods these are, as the catalog names them.
pub const RESPONSE: &str = "Response";
pub const WEBSOCKET: &str = "WebSocket";

impl ResFn {
    /// A method; only `app.publish` is a function of a module.
    pub fn is_method(&self) -> bool {
        self.of.is_some()
    }

    /// A method of a WebSocket connection, whose object names it.
    pub fn is_socket(&self) -> bool {
        self.of == Some(WEBSOCKET)
    }

    /// It returns `res`, so calls chain (`res:status(201):json(x)`).
    pub fn chains(&self) -> bool {
        matches!(
            self.op,
            ResOp::Status | ResOp::Header | ResOp::Subscribe | ResOp::Event
        )
    }
}

const RES: Ty = Ty::Named(RESPONSE);

/// In the catalog's order.
pub const FUNCTIONS: &[ResFn] = &[
    ResFn {
        name: "status",
        of: Some(RESPONSE),
        op: ResOp::Status,
        params: &[p("code", Ty::Int)],
        ret: RES,
        doc: "set the status code (200-599); returns res, so calls chain",
    },
    ResFn {
        name: "header",
        of: Some(RESPONSE),
        op: ResOp::Header,
        params: &[p("name", Ty::Str), p("value", Ty::Str)],
        ret: RES,
        doc: "add a response header (again for another line; Content-Type and Location replace); returns res",
    },
    ResFn {
        name: "json",
        of: Some(RESPONSE),
        op: ResOp::Json,
        params: &[p("data", Ty::Any), opt("status", Ty::Int)],
        ret: Ty::Nil,
        doc: "send data as JSON (Content-Type: application/json), optionally setting the status",
    },
    ResFn {
        name: "text",
        of: Some(RESPONSE),
        op: ResOp::Text,
        params: &[p("body", Ty::Str)],
        ret: Ty::Nil,
        doc: "send the body as text/plain; charset=utf-8",
    },
    ResFn {
        name: "html",
        of: Some(RESPONSE),
        op: ResOp::Html,
        params: &[p("body", Ty::Str)],
        ret: Ty::Nil,
        doc: "send the body as text/html; charset=utf-8 with the app's Content-Security-Policy",
    },
    ResFn {
        name: "redirect",
        of: Some(RESPONSE),
        op: ResOp::Redirect,
        params: &[p("url", Ty::Str), opt("status", Ty::Int)],
        ret: Ty::Nil,
        doc: "redirect to the URL: the status (default 302), Location and an empty body",
    },
    ResFn {
        name: "subscribe",
        of: Some(RESPONSE),
        op: ResOp::Subscribe,
        params: &[p("topic", Ty::Str)],
        ret: RES,
        doc: "make the response a Server-Sent Events stream that carries every message published to topic (as an event named after it); call again for more topics; returns res",
    },
    ResFn {
        name: "event",
        of: Some(RESPONSE),
        op: ResOp::Event,
        params: &[p("data", Ty::Any), opt("name", Ty::Str), opt("id", Ty::Str)],
        ret: RES,
        doc: "make the response a Server-Sent Events stream and send this event first (data: a string, or anything else as JSON); returns res",
    },
    ResFn {
        name: "publish",
        of: None,
        op: ResOp::Publish,
        params: &[p("topic", Ty::Str), p("data", Ty::Any)],
        ret: Ty::Nil,
        doc: "send data (a string, bytes, or anything else as JSON) to every subscriber of topic on every worker and, with --kv redis://, every process; sent once this request's writes commit, not at all if its handler fails",
    },
    ResFn {
        name: "send",
        of: Some(WEBSOCKET),
        op: ResOp::Send,
        params: &[p("data", Ty::Any), opt("binary", Ty::Bool)],
        ret: Ty::Nil,
        doc: "send a message once the handler returns and its writes commit: a string as text (as binary when binary is true), JS bytes as binary, anything else as JSON text",
    },
    ResFn {
        name: "close",
        of: Some(WEBSOCKET),
        op: ResOp::Close,
        params: &[opt("code", Ty::Int), opt("reason", Ty::Str)],
        ret: Ty::Nil,
        doc: "close the connection (code 1000 by default; 1000-1003, 1007-1014 or 3000-4999; a reason of at most 123 bytes)",
    },
    ResFn {
        name: "subscribe",
        of: Some(WEBSOCKET),
        op: ResOp::Join,
        params: &[p("topic", Ty::Str)],
        ret: Ty::Nil,
        doc: "send this connection every message app.publish sends to topic, from any worker or process",
    },
    ResFn {
        name: "unsubscribe",
        of: Some(WEBSOCKET),
        op: ResOp::Leave,
        params: &[p("topic", Ty::Str)],
        ret: Ty::Nil,
        doc: "stop sending this connection the topic's messages",
    },
];
