//! What a handler sends (Hull §4.2; the live updates of docs/protocols.md):
//! `res`'s methods and `app.publish`, declared once for the capability
//! table ([`crate::cap`], whose adapter cap/res.rs does them on the response
//! in progress) and the API catalog (api/app.rs). The WebSocket's `ws:*`
//! methods name their connection by the object they are called on, which no
//! capability value carries: each runtime still binds those (ws.rs).

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
}

/// One function, the same name in Lua and JS: a method of `res` (Lua
/// `res:json(...)`, JS `res.json(...)`), or `app.publish`.
pub struct ResFn {
    pub name: &'static str,
    pub op: ResOp,
    pub params: &'static [Param],
    pub ret: Ty,
    pub doc: &'static str,
}

/// The type whose methods these are, as the catalog names it.
pub const RESPONSE: &str = "Response";

impl ResFn {
    /// A method of `res`; only `app.publish` is a function of a module.
    pub fn is_method(&self) -> bool {
        self.op != ResOp::Publish
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
        op: ResOp::Status,
        params: &[p("code", Ty::Int)],
        ret: RES,
        doc: "set the status code (200-599); returns res, so calls chain",
    },
    ResFn {
        name: "header",
        op: ResOp::Header,
        params: &[p("name", Ty::Str), p("value", Ty::Str)],
        ret: RES,
        doc: "add a response header (again for another line; Content-Type and Location replace); returns res",
    },
    ResFn {
        name: "json",
        op: ResOp::Json,
        params: &[p("data", Ty::Any), opt("status", Ty::Int)],
        ret: Ty::Nil,
        doc: "send data as JSON (Content-Type: application/json), optionally setting the status",
    },
    ResFn {
        name: "text",
        op: ResOp::Text,
        params: &[p("body", Ty::Str)],
        ret: Ty::Nil,
        doc: "send the body as text/plain; charset=utf-8",
    },
    ResFn {
        name: "html",
        op: ResOp::Html,
        params: &[p("body", Ty::Str)],
        ret: Ty::Nil,
        doc: "send the body as text/html; charset=utf-8 with the app's Content-Security-Policy",
    },
    ResFn {
        name: "redirect",
        op: ResOp::Redirect,
        params: &[p("url", Ty::Str), opt("status", Ty::Int)],
        ret: Ty::Nil,
        doc: "redirect to the URL: the status (default 302), Location and an empty body",
    },
    ResFn {
        name: "subscribe",
        op: ResOp::Subscribe,
        params: &[p("topic", Ty::Str)],
        ret: RES,
        doc: "make the response a Server-Sent Events stream that carries every message published to topic (as an event named after it); call again for more topics; returns res",
    },
    ResFn {
        name: "event",
        op: ResOp::Event,
        params: &[p("data", Ty::Any), opt("name", Ty::Str), opt("id", Ty::Str)],
        ret: RES,
        doc: "make the response a Server-Sent Events stream and send this event first (data: a string, or anything else as JSON); returns res",
    },
    ResFn {
        name: "publish",
        op: ResOp::Publish,
        params: &[p("topic", Ty::Str), p("data", Ty::Any)],
        ret: Ty::Nil,
        doc: "send data (a string, bytes, or anything else as JSON) to every subscriber of topic on every worker and, with --kv redis://, every process; sent once this request's writes commit, not at all if its handler fails",
    },
];
