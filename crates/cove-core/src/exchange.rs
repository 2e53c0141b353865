//! One request/response pair as it moves through the pipeline.

use std::borrow::Cow;

use bytes::Bytes;
pub use http::HeaderMap;
use http::{HeaderName, HeaderValue};

use crate::{Params, Plan, Response};

/// The request as scripts see it (Hull §4.1).
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Borrowed for the standard methods (no allocation per request).
    pub method: Cow<'static, str>,
    /// Path without the query, as sent (not percent-decoded).
    pub path: String,
    /// Raw query string after `?`, if any.
    pub query: Option<String>,
    /// As parsed by the server (names lower-case, first-arrival order,
    /// duplicates kept): moved, not copied, since most scripts never read them.
    pub headers: HeaderMap,
    /// `None` until the body is read, and when the request had none.
    pub body: Option<Bytes>,
    /// Percent-decoded `:param` captures.
    pub params: Params,
}

impl Request {
    /// First value of a header, by lower-case name.
    pub fn header(&self, lower_name: &str) -> Option<Cow<'_, str>> {
        self.headers.get(lower_name).map(text)
    }

    /// Every value of a header that is text, in arrival order.
    pub fn header_values<'a>(&'a self, lower_name: &str) -> impl Iterator<Item = &'a str> {
        self.headers
            .get_all(lower_name)
            .iter()
            .filter_map(|v| v.to_str().ok())
    }

    /// The headers as scripts see them: one entry per name, in first-arrival
    /// order, duplicates joined with `, ` (`; ` for `cookie`, RFC 9110 §5.3).
    pub fn joined_headers(&self) -> Vec<(&str, Cow<'_, str>)> {
        let mut out = Vec::with_capacity(self.headers.keys_len());
        for name in self.headers.keys() {
            let mut values = self.headers.get_all(name).iter();
            let Some(first) = values.next() else { continue };
            let mut joined = text(first);
            let sep = if name == "cookie" { "; " } else { ", " };
            for v in values {
                let joined = joined.to_mut();
                joined.push_str(sep);
                joined.push_str(&text(v));
            }
            out.push((name.as_str(), joined));
        }
        out
    }
}

/// A header value as text; bytes that are not UTF-8 become U+FFFD.
fn text(v: &HeaderValue) -> Cow<'_, str> {
    crate::utf8_lossy(v.as_bytes())
}

/// Request headers from name/value pairs (`cove test` requests, tests):
/// names are lower-cased; a pair HTTP could not carry is left out.
pub fn header_map<N: AsRef<str>, V: AsRef<str>>(pairs: &[(N, V)]) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(pairs.len());
    for (name, value) in pairs {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_ref().as_bytes()),
            HeaderValue::from_str(value.as_ref()),
        ) {
            map.append(n, v);
        }
    }
    map
}

/// Where a script app lives and how it is limited; the same for every runtime.
#[derive(Debug, Clone)]
pub struct ScriptConfig {
    /// The app's files: a directory, or the pack of a built executable.
    pub files: crate::AppFiles,
    /// The entry file (`app.lua` or `app.js`), relative to `files`.
    pub entry: String,
    pub limits: crate::Limits,
    /// Commit the writes of one event-loop turn together (cove-db group.rs).
    pub group_commit: bool,
}

impl ScriptConfig {
    /// The entry file as shown in errors: relative to the app directory.
    pub fn display_name(&self) -> String {
        self.entry.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_duplicate_headers() {
        let req = Request {
            headers: header_map(&[
                ("cookie", "a=1"),
                ("Accept", "x"),
                ("cookie", "b=2"),
                ("accept", "y"),
                ("x-bad", "\u{1}"),
            ]),
            ..Request::default()
        };
        let joined: Vec<(&str, String)> = req
            .joined_headers()
            .into_iter()
            .map(|(n, v)| (n, v.into_owned()))
            .collect();
        assert_eq!(
            joined,
            vec![
                ("cookie", "a=1; b=2".to_string()),
                ("accept", "x, y".to_string())
            ]
        );
        assert_eq!(req.header("accept").as_deref(), Some("x"));
        let values: Vec<_> = req.header_values("cookie").collect();
        assert_eq!(values, ["a=1", "b=2"]);
    }

    #[test]
    fn the_next_event_starts_afresh_on_the_same_request() {
        use crate::{Plan, Target, TurnUse, WsCommand, WsEvent};
        let req = Request {
            path: "/chat".into(),
            ..Request::default()
        };
        let plan = Plan {
            target: Target::Socket {
                handler: 3,
                params: Vec::new(),
            },
            pre: Vec::new(),
            post: Vec::new(),
        };
        let mut ex = Exchange::new(req, plan);
        ex.next_event(7, WsEvent::Open);
        ex.res.socket_command(7, WsCommand::text("hi")).unwrap();
        ex.res.publish("room", "x".into(), false).unwrap();
        ex.res.status = 500;
        ex.errors.push(crate::ScriptError {
            message: "app.lua:3: boom".into(),
        });
        ex.turn.touched = Some(4);
        ex.at_handler = true;
        ex.cursor = 2;

        let message = WsEvent::Message {
            data: "m".into(),
            binary: false,
        };
        ex.next_event(7, message.clone());
        assert_eq!(ex.req.path, "/chat");
        assert!(matches!(ex.plan.target, Target::Socket { handler: 3, .. }));
        let turn = ex.res.socket_turn().expect("the event's turn");
        assert_eq!((turn.conn, &turn.event), (7, &message));
        assert!(turn.commands.is_empty(), "the last event's sends are gone");
        let live = ex.res.live.as_deref().unwrap();
        assert!(live.outbox.is_empty() && live.events.is_none());
        assert_eq!(ex.res.status, 200);
        assert!(ex.errors.is_empty() && ex.pending.is_none() && ex.resume.is_none());
        assert_eq!(ex.turn, TurnUse::default());
        assert_eq!((ex.cursor, ex.at_handler), (0, false));
    }

    #[test]
    fn header_bytes_that_are_not_text_are_replaced() {
        let mut req = Request::default();
        let raw = HeaderValue::from_bytes(b"caf\xc3\xa9 \xff").unwrap();
        req.headers.append("x-name", raw);
        assert_eq!(req.header("x-name").as_deref(), Some("caf\u{e9} \u{fffd}"));
    }
}

/// Request, response and plan for one dispatch, plus the script errors raised
/// along the way (the server logs them).
#[derive(Debug)]
pub struct Exchange {
    pub req: Request,
    pub res: Response,
    pub plan: Plan,
    pub errors: Vec<crate::ScriptError>,
    /// Set by an engine whose call suspended on blocking work.
    pub pending: Option<crate::Job>,
    /// The finished job's output, for the suspended call to resume with.
    pub resume: Option<crate::JobOutput>,
    /// Where the pipeline stands: the next call of the current chain, and
    /// whether the chains are done and the handler is next.
    pub(crate) cursor: usize,
    pub(crate) at_handler: bool,
    /// With the audit log on: the request's place in it, entered by the
    /// server around each script call (cove_core::audit).
    pub audit: Option<crate::audit::RequestScope>,
    /// What the request's calls left in the worker's database turn: the
    /// write group its response waits for (group commit, see cove-db).
    pub turn: crate::TurnUse,
}

impl Exchange {
    pub fn new(req: Request, plan: Plan) -> Self {
        Exchange {
            req,
            res: Response::new(),
            plan,
            errors: Vec::new(),
            pending: None,
            resume: None,
            cursor: 0,
            at_handler: false,
            audit: None,
            turn: crate::TurnUse::default(),
        }
    }

    /// Ready this exchange for its handler's next call on the same request:
    /// a WebSocket connection's next `event`. The request and plan stay; the
    /// response starts afresh (keeping its live parts' box, which the event
    /// goes in), with no errors, nothing pending and the turn clear. Cheaper
    /// than a new exchange a message (the 528-byte struct built, moved into
    /// the event's future and dropped: ~600 instructions, callgrind).
    pub fn next_event(&mut self, conn: u64, event: crate::WsEvent) {
        let live = self.res.live.take();
        self.res = Response::new();
        if let Some(mut live) = live {
            *live = crate::LiveParts::default();
            self.res.live = Some(live);
        }
        self.res.start_socket_turn(conn, event);
        self.errors.clear();
        self.pending = None;
        self.resume = None;
        self.cursor = 0;
        self.at_handler = false;
        self.audit = None;
        self.turn = crate::TurnUse::default();
    }
}
