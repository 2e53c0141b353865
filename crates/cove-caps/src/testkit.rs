//! What `cove test` shares between the runtimes (Hull §9): dispatching a test
//! request in-process, deep comparison with a readable diff, and the report
//! (in `report`). The bindings only convert values to and from these types.

use std::cell::RefCell;
use std::rc::Rc;

use bytes::Bytes;
use serde_json::Value as Json;

mod report;

pub use report::{CaseResult, FailedRequest, Failure, FileResult, Suite};

use cove_core::{
    log, run_main_blocking, run_pre_blocking, Engine, Exchange, Flow, Request, RouteTable, Target,
};

/// A request made by `test.get(path, {body, headers, middleware})`.
#[derive(Debug, Default, Clone)]
pub struct TestCall {
    pub method: String,
    /// Path with an optional `?query`.
    pub path: String,
    /// `None` for an empty body (scripts then see `req.body` as nil/null).
    pub body: Option<Vec<u8>>,
    pub headers: Vec<(String, String)>,
    /// Run the app's middleware too; Hull's test runner calls the handler only.
    pub middleware: bool,
}

/// What a test request got back.
#[derive(Debug, Clone)]
pub struct TestReply {
    pub status: u16,
    /// Lower-cased names; `content-type` first when there is one.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    /// What the app's scripts raised on the way (`app.lua:7: ...`), first
    /// to last; the status is then a 500 (or 503).
    pub errors: Vec<String>,
}

impl TestReply {
    /// One entry per header name, in first-seen order, repeated values joined
    /// with `, ` (what scripts see as `r.headers`).
    pub fn joined_headers(&self) -> Vec<(&str, String)> {
        let mut out: Vec<(&str, String)> = Vec::with_capacity(self.headers.len());
        for (name, value) in &self.headers {
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some((_, prev)) => {
                    prev.push_str(", ");
                    prev.push_str(value);
                }
                None => out.push((name, value.clone())),
            }
        }
        out
    }

    /// The body if it looks like JSON (Hull: starts with `{` or `[`).
    pub fn json_text(&self) -> Option<&[u8]> {
        matches!(self.body.first(), Some(b'{' | b'[')).then_some(&self.body[..])
    }
}

/// Hull's header rules: names lower-cased, names of 64+ bytes dropped, at most 64 headers.
pub fn add_header(call: &mut TestCall, name: &str, value: &str) {
    if name.len() < 64 && call.headers.len() < 64 {
        call.headers
            .push((name.to_ascii_lowercase(), value.to_string()));
    }
}

/// Run `call` through the app in-process: the route handler only, or the
/// whole middleware pipeline when asked. Script errors are logged (the
/// reply is then a 500, as from the server).
pub fn dispatch<E: Engine>(routes: &RouteTable, engine: &E, call: TestCall) -> TestReply {
    let (path, query) = match call.path.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (call.path.clone(), None),
    };
    let method = call.method.to_ascii_uppercase();
    let mut plan = routes.plan(&method, &path);
    if !call.middleware {
        plan.pre.clear();
        plan.post.clear();
    }
    let params = match &mut plan.target {
        Target::Route { params, .. } | Target::Socket { params, .. } => std::mem::take(params),
        _ => Default::default(),
    };
    let req = Request {
        method: method.into(),
        path,
        query,
        headers: cove_core::header_map(&call.headers),
        body: call.body.filter(|b| !b.is_empty()).map(Bytes::from),
        params,
    };
    let mut ex = Exchange::new(req, plan);
    let mut state = E::State::default();
    if run_pre_blocking(engine, &mut ex, &mut state) == Flow::Continue {
        run_main_blocking(engine, &mut ex, &mut state);
    }
    for e in &ex.errors {
        log::error(&e.message);
    }
    let errors = ex.errors.into_iter().map(|e| e.message).collect();
    reply_of(ex.res, errors)
}

/// The reply a test sees. An event stream's is what the stream starts
/// with: its first events as the body (published messages have no
/// subscriber in a test, and what the handler published is not sent).
fn reply_of(mut res: cove_core::Response, errors: Vec<String>) -> TestReply {
    let mut headers = Vec::with_capacity(res.headers.len() + 1);
    let stream = res.live.take().and_then(|live| live.events);
    if let Some(stream) = stream.filter(|_| res.status < 300) {
        res.content_type = Some("text/event-stream".into());
        res.body = stream.first.concat().into();
    }
    if let Some(ct) = res.content_type.as_deref().or(res.body_type) {
        headers.push(("content-type".to_string(), ct.to_string()));
    }
    for (n, v) in res.headers {
        headers.push((n.to_ascii_lowercase(), v));
    }
    TestReply {
        status: res.status,
        headers,
        body: res.body,
        errors,
    }
}

/// How many failed requests a failing case lists.
const MAX_TRAIL: usize = 3;

/// The requests of the running case whose scripts raised, so that its
/// failure can say why a response was a 500 (`expected: [] actual: nil`
/// alone does not). Cloned into the bindings' `test.get`…; [`Suite`] reads
/// and clears it as each case ends.
#[derive(Debug, Default, Clone)]
pub struct Trail(Rc<RefCell<Vec<FailedRequest>>>);

impl Trail {
    /// [`dispatch`], remembering the request if a script raised.
    pub fn dispatch<E: Engine>(
        &self,
        routes: &RouteTable,
        engine: &E,
        call: TestCall,
    ) -> TestReply {
        let (method, path) = (call.method.to_ascii_uppercase(), call.path.clone());
        let reply = dispatch(routes, engine, call);
        if !reply.errors.is_empty() {
            self.0.borrow_mut().push(FailedRequest {
                method,
                path,
                status: reply.status,
                errors: reply.errors.clone(),
            });
        }
        reply
    }

    /// Forget the requests so far (made while a test file loaded: they
    /// belong to no case).
    pub fn clear(&self) {
        self.0.borrow_mut().clear();
    }

    /// The last few requests and how many earlier ones are left out,
    /// emptying the trail.
    fn take(&self) -> (Vec<FailedRequest>, usize) {
        let mut requests = std::mem::take(&mut *self.0.borrow_mut());
        let earlier = requests.len().saturating_sub(MAX_TRAIL);
        requests.drain(..earlier);
        (requests, earlier)
    }
}

/// Deep equality of two decoded values; numbers compare by value (`1 == 1.0`).
pub fn json_equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

const MAX_DIFF_LINES: usize = 12;

/// Where `actual` differs from `expected`, one line per difference:
/// `at .items[1].title: expected "a", actual "b"`.
pub fn diff(expected: &Json, actual: &Json) -> Vec<String> {
    let mut out = Vec::new();
    walk_diff("", expected, actual, &mut out);
    if out.len() > MAX_DIFF_LINES {
        let more = out.len() - MAX_DIFF_LINES;
        out.truncate(MAX_DIFF_LINES);
        out.push(format!("… and {more} more difference(s)"));
    }
    out
}

fn walk_diff(path: &str, e: &Json, a: &Json, out: &mut Vec<String>) {
    let here = if path.is_empty() { "." } else { path };
    match (e, a) {
        (Json::Object(x), Json::Object(y)) => {
            for (k, v) in x {
                let p = format!("{path}.{k}");
                match y.get(k) {
                    Some(w) => walk_diff(&p, v, w, out),
                    None => out.push(format!("at {p}: expected {}, actual missing", show(v))),
                }
            }
            for (k, w) in y {
                if !x.contains_key(k) {
                    out.push(format!("at {path}.{k}: unexpected {}", show(w)));
                }
            }
        }
        (Json::Array(x), Json::Array(y)) => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                walk_diff(&format!("{path}[{i}]"), v, w, out);
            }
            if x.len() != y.len() {
                out.push(format!(
                    "at {here}: expected {} item(s), actual {}",
                    x.len(),
                    y.len()
                ));
            }
        }
        _ if json_equal(e, a) => {}
        _ => out.push(format!(
            "at {here}: expected {}, actual {}",
            show(e),
            show(a)
        )),
    }
}

const MAX_SHOWN: usize = 200;

/// A value as shown in failure messages: compact JSON, cut at 200 bytes.
pub fn show(v: &Json) -> String {
    let mut s = v.to_string();
    if s.len() > MAX_SHOWN {
        let mut cut = MAX_SHOWN;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// One side of a failed `test.eq`, as the binding sees it.
pub enum Shown {
    /// A value that has a JSON form (tables/objects are diffed).
    Value(Json),
    /// Anything else, already written the runtime's way (`nil`, `undefined`, `function`).
    Text(String),
}

impl Shown {
    fn text(&self) -> String {
        match self {
            Shown::Value(v) => show(v),
            Shown::Text(t) => t.clone(),
        }
    }
}

/// The message of a failed `test.eq`: Hull's three lines, plus where two
/// tables/objects differ.
pub fn eq_failure(msg: Option<&str>, expected: &Shown, actual: &Shown) -> String {
    let mut out = match msg {
        Some(m) => format!("test.eq failed: {m}"),
        None => "test.eq failed".to_string(),
    };
    out.push_str(&format!(
        "\n  expected: {}\n  actual:   {}",
        expected.text(),
        actual.text()
    ));
    let nested = |v: &Json| v.is_object() || v.is_array();
    if let (Shown::Value(e), Shown::Value(a)) = (expected, actual) {
        if nested(e) && nested(a) {
            for line in diff(e, a) {
                out.push_str("\n  ");
                out.push_str(&line);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stream_replies_with_its_first_events() {
        let mut res = cove_core::Response::default();
        res.subscribe("chat").unwrap();
        res.send_event(cove_core::event(Some("hi"), None, b"1").unwrap());
        res.send_event(cove_core::event(None, None, b"2").unwrap());
        let reply = reply_of(res, Vec::new());
        assert_eq!(&reply.body[..], b"event: hi\ndata: 1\n\ndata: 2\n\n");
        assert_eq!(
            reply.headers,
            [("content-type".to_string(), "text/event-stream".to_string())]
        );
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_equal(&json!(1), &json!(1.0)));
        assert!(!json_equal(&json!(1), &json!("1")));
        assert!(json_equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
    }

    #[test]
    fn diff_names_paths() {
        let e = json!({"items": [{"title": "a"}, {"title": "b"}], "n": 2});
        let a = json!({"items": [{"title": "a"}, {"title": "c"}], "extra": true});
        assert_eq!(
            diff(&e, &a),
            vec![
                "at .items[1].title: expected \"b\", actual \"c\"",
                "at .n: expected 2, actual missing",
                "at .extra: unexpected true",
            ]
        );
        assert_eq!(
            diff(&json!([1, 2]), &json!([1])),
            vec!["at .: expected 2 item(s), actual 1"]
        );
    }

    #[test]
    fn failure_message_has_hulls_lines_and_the_diff() {
        let v = |j: Json| Shown::Value(j);
        let m = eq_failure(Some("status"), &v(json!(200)), &Shown::Text("nil".into()));
        assert_eq!(
            m,
            "test.eq failed: status\n  expected: 200\n  actual:   nil"
        );
        let m = eq_failure(None, &v(json!({"a": 1})), &v(json!({"a": 2})));
        assert!(m.ends_with("\n  at .a: expected 1, actual 2"), "{m}");
    }

    #[test]
    fn repeated_headers_are_joined() {
        let reply = TestReply {
            status: 200,
            headers: vec![
                ("set-cookie".into(), "a=1".into()),
                ("x".into(), "y".into()),
                ("set-cookie".into(), "b=2".into()),
            ],
            body: Bytes::new(),
            errors: Vec::new(),
        };
        assert_eq!(
            reply.joined_headers(),
            vec![
                ("set-cookie", "a=1, b=2".to_string()),
                ("x", "y".to_string())
            ]
        );
    }
}
