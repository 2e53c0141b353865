//! `res.json`'s serializer (json.rs) against `JSON.stringify` in the
//! same context, on values built fresh for each: first with no shape kept,
//! then again once the key lists have been kept (their objects written from
//! their property slots, raw/layout.rs), then nested beside copies of
//! themselves. The serializer may hand a value over to `JSON.stringify`
//! only when it holds something the serializer documents it does not
//! handle; anything it writes must be `JSON.stringify`'s text.

use std::cell::RefCell;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rquickjs::Ctx;

use super::js_source::to_js;
use super::support::{eval, ours, runner, stringify, TestApp};
use super::values::{node, Node};

const APP: &str = r#"
import { app } from "hull:app";
app.get("/json", (req, res) => res.json(globalThis.CASE));
"#;

/// The serializer and `JSON.stringify` agree on the value `expr` builds
/// (each on a copy of its own: getters may change what they are read
/// from).
fn agree(ctx: &Ctx<'_>, expr: &str, may_decline: bool) -> Result<(), TestCaseError> {
    let v = eval(ctx, expr);
    let got = ours(ctx, &v);
    // A top-level `undefined` (or function) is written `null`.
    let want = stringify(ctx, eval(ctx, expr)).map(|s| s.unwrap_or_else(|| "null".into()));
    match got {
        Some(text) => prop_assert_eq!(Ok(text), want, "{}", expr),
        None => prop_assert!(may_decline, "handed over a plain value: {}", expr),
    }
    Ok(())
}

/// The key lists of the rows in `n`, kept as `db.query` keeps its
/// columns' (their objects then have a known shape at any depth).
fn keep_rows(ctx: &Ctx<'_>, n: &Node) {
    match n {
        Node::Rows(keys, rows) => {
            // A key with a lone surrogate has no UTF-8 name: not kept.
            let names: Option<Vec<String>> = keys
                .iter()
                .map(|k| eval(ctx, &format!("\"{}\"", k.0)).get().ok())
                .collect();
            if let Some(names) = names {
                crate::raw::shapes::keep_names(ctx, &names);
            }
            rows.iter().flatten().for_each(|v| keep_rows(ctx, v));
        }
        Node::Arr(items) => items.iter().flatten().for_each(|v| keep_rows(ctx, v)),
        Node::Obj(o) => o.props.iter().for_each(|(_, v)| keep_rows(ctx, v)),
        _ => {}
    }
}

/// Apps loaded for a run: a runtime keeps at most 256 key lists, so a
/// fresh one every few dozen cases keeps the kept-shape path busy.
struct Apps {
    app: TestApp,
    used: usize,
}

impl Apps {
    fn next(&mut self) -> &TestApp {
        if self.used == 32 {
            self.app = TestApp::load(APP);
            self.used = 0;
        }
        self.used += 1;
        &self.app
    }
}

#[test]
fn the_serializer_writes_what_json_stringify_does() {
    let apps = RefCell::new(Apps {
        app: TestApp::load(APP),
        used: 0,
    });
    runner(256)
        .run(&node(), |n| {
            let expr = to_js(&n);
            let may = n.may_decline();
            let mut apps = apps.borrow_mut();
            apps.next().with(|ctx| {
                agree(ctx, &expr, may)?;
                keep_rows(ctx, &n);
                agree(ctx, &expr, may)?;
                agree(ctx, &format!("[{expr}, {{ \"k\": {expr} }}, {expr}]"), may)
            })
        })
        .unwrap();
}

/// `res.json` in a handler (a fast method, the body taken as it is, the
/// `JSON.stringify` fallback) sends what `JSON.stringify` returns, `null`
/// for `undefined`, or fails the request when it throws.
#[test]
fn res_json_sends_what_json_stringify_returns() {
    let app = TestApp::load(APP);
    runner(64)
        .run(&node(), |n| {
            let expr = to_js(&n);
            let want = app.with(|ctx| {
                let v = eval(ctx, &expr);
                ctx.globals().set("CASE", v).expect("set CASE");
                stringify(ctx, eval(ctx, &expr))
            });
            let reply = app.get("/json");
            match want {
                // A value handed over after some getters ran may read
                // differently from a fresh copy.
                _ if n.may_decline() => prop_assert!(reply.status == 200 || reply.status == 500),
                Ok(text) => {
                    prop_assert_eq!(reply.status, 200, "{:?}", reply.errors);
                    let text = text.unwrap_or_else(|| "null".into());
                    prop_assert_eq!(&reply.body[..], text.as_bytes());
                }
                Err(_) => prop_assert_eq!(reply.status, 500),
            }
            Ok(())
        })
        .unwrap();
}

/// Found by the property above (issue 38): an object of a kept shape was
/// written from its property slots by their index in the shape it had when
/// its serialization started, while a getter further down had changed it.
/// A member made an accessor had its getter/setter pair read as a value
/// (part of the getter's address went out as a number), and members
/// deleted until QuickJS compacted the slots were read past the end of
/// the new, shorter array.
#[test]
fn r38_an_object_changed_while_it_is_serialized_is_read_by_name() {
    let accessor = r#"(() => {
        const o = {a: 1, b: {}, c: 3, d: 4};
        Object.defineProperty(o.b, "g", {enumerable: true, get() {
            Object.defineProperty(o, "c", {enumerable: true, get() { return "getter"; }});
            return 1;
        }});
        return o;
    })()"#;
    let compacted = r#"(() => {
        const o = {a: 1, b: {}, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10, k: 11,
                   l: 12, m: 13, n: 14, p: 15, q: 16};
        Object.defineProperty(o.b, "g", {enumerable: true, get() {
            for (const k of "cdefghijklmn") delete o[k];
            o.added = "late";
            return 1;
        }});
        return o;
    })()"#;
    let app = TestApp::load(APP);
    app.with(|ctx| {
        // The first round keeps the key list; the next ones use it.
        for round in 0..3 {
            for src in [accessor, compacted] {
                agree(ctx, src, false).unwrap_or_else(|e| panic!("round {round}: {e}"));
            }
        }
    });
}

/// 128 levels of objects or arrays are written here; deeper values are
/// handed over (and come out as `JSON.stringify` writes them).
#[test]
fn nesting_up_to_the_limit() {
    let app = TestApp::load(APP);
    app.with(|ctx| {
        for wrap in ["{ v: v }", "[v]", "{ a: 1, v: v, z: 'z' }"] {
            for depth in [127, 128, 129] {
                let src = format!(
                    "(() => {{ let v = {{ leaf: 'x' }}; for (let i = 1; i < {depth}; i++) v = {wrap}; return v; }})()"
                );
                let v = eval(ctx, &src);
                let got = ours(ctx, &v);
                assert_eq!(got.is_some(), depth <= 128, "{wrap} at {depth}");
                if let Some(text) = got {
                    assert_eq!(Ok(Some(text)), stringify(ctx, v), "{wrap} at {depth}");
                }
            }
        }
    });
}

/// A cycle whose members call getters is handed to `JSON.stringify`
/// where it starts again: walked to the depth limit, it reached QuickJS's
/// stack limit in a debug build and the encode threw "Maximum call stack
/// size exceeded" (a case the property test above found). Shared objects
/// that make no cycle are written however deep.
#[test]
fn a_cycle_with_getters_is_handed_over_not_thrown() {
    use crate::tests::values::{Build, Key, Later, Obj};
    let k = |s: &str| Key(s.to_string());
    let obj = |props, later| {
        Node::Obj(Box::new(Obj {
            build: Build::Literal,
            props,
            later,
        }))
    };
    let getter = obj(vec![], vec![Later::Getter(k("x"), Node::Null)]);
    let n = obj(
        vec![(k("a"), obj(vec![(k("b"), getter)], vec![]))],
        vec![Later::Set(k("x"), Node::Itself)],
    );
    let expr = to_js(&n);
    let shared = "(() => { const s = { k: 1 }; let v = { s, t: s }; \
                  for (let i = 0; i < 20; i++) v = { v, s }; return v; })()";
    let app = TestApp::load(APP);
    app.with(|ctx| {
        let wrapped = format!("[{expr}, {{ \"k\": {expr} }}, {expr}]");
        for e in [&expr, &wrapped] {
            assert_eq!(ours(ctx, &eval(ctx, e)), None, "{e}");
            assert!(stringify(ctx, eval(ctx, e)).is_err());
        }
        let want = stringify(ctx, eval(ctx, shared)).unwrap();
        assert_eq!(ours(ctx, &eval(ctx, shared)), want);
    });
}
