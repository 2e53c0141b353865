use super::*;

fn scope(runtime: Runtime, kv: &Kv) -> Scope<'_> {
    Scope {
        runtime,
        hosts: &[],
        env_allow: None,
        kv,
        db: None,
        origin: cove_db::Origin::App,
        is_async: false,
    }
}

fn find(module: &str, lua: &str) -> &'static CapFn {
    module_functions(module)
        .find(|f| f.lua == Some(lua) || f.js == Some(lua))
        .expect("a function")
}

fn err(r: Result<CapValue, CapError>) -> CapError {
    r.expect_err("an error")
}

#[test]
fn every_function_is_in_the_catalog_under_its_names() {
    for f in functions() {
        let m = crate::api::module_by_js(f.module).expect(f.module);
        // A method is among its type's (`res:json`: the Response type's).
        let sigs = match f.method_of() {
            Some(t) => m.types.iter().find(|d| d.name == t).expect(t).methods,
            None => &m.functions[..],
        };
        let has = |lua: Option<&str>, js: Option<&str>| {
            sigs.iter()
                .any(|s| (lua.is_none() || s.lua == lua) && (js.is_none() || s.js == js))
        };
        assert!(has(f.lua, f.js), "{}: {:?}/{:?}", f.module, f.lua, f.js);
        if f.js_async {
            let name = format!("{}Async", f.js.unwrap());
            assert!(
                m.functions.iter().any(|s| s.js == Some(name.as_str())),
                "{name}"
            );
        }
    }
    assert_eq!(
        modules(),
        [
            "hull:crypto",
            "hull:kv",
            "hull:http",
            "hull:smtp",
            "hull:env",
            "hull:time",
            "hull:json",
            "hull:db",
            "hull:app",
            "hull:metrics",
            "hull:log"
        ]
    );
}

/// The reverse: a module the loop binds has no catalog function the table
/// lacks (one would be declared and documented but missing at run time).
#[test]
fn every_catalog_function_of_a_bound_module_is_in_the_table() {
    for spec in modules() {
        let m = crate::api::module_by_js(spec).expect(spec);
        for sig in &m.functions {
            // A function taking a function (`db.batch`) is its prelude's:
            // no capability value carries one.
            if sig.params.iter().any(|p| p.ty == crate::sig::Ty::Fn) {
                continue;
            }
            let bound = module_functions(spec).any(|f| {
                (sig.lua.is_none() || sig.lua == f.lua)
                    && (sig.js == f.js
                        || sig
                            .js
                            .is_some_and(|js| f.js_async && js.strip_suffix("Async") == f.js))
            });
            assert!(bound, "{spec}: {:?}/{:?}", sig.lua, sig.js);
        }
    }
}

/// Every method the catalog gives `res` is bound by the loop.
#[test]
fn every_response_method_is_in_the_table() {
    let m = crate::api::module_by_js("hull:app").expect("hull:app");
    let t = m.types.iter().find(|t| t.name == "Response").unwrap();
    let bound: Vec<_> = methods_of("Response").map(|f| (f.lua, f.js)).collect();
    let declared: Vec<_> = t.methods.iter().map(|s| (s.lua, s.js)).collect();
    assert_eq!(bound, declared);
    // `app`'s own: the routes, the middleware, `app.ws`, the manifest's
    // functions and `app.publish` (`static`: JS only).
    let app: Vec<_> = module_functions("hull:app")
        .map(|f| f.js.unwrap())
        .collect();
    assert_eq!(
        app,
        [
            "get",
            "post",
            "put",
            "patch",
            "delete",
            "del",
            "options",
            "use",
            "usePost",
            "ws",
            "manifest",
            "getManifest",
            "config",
            "static",
            "publish"
        ]
    );
}

#[test]
fn time_and_log_go_through_the_table() {
    let kv = Kv::local();
    let f = module_functions("hull:time")
        .find(|f| f.lua == Some("datetime"))
        .unwrap();
    let Some(Reading::Text(read)) = f.reading() else {
        panic!("time.datetime reads text")
    };
    assert_eq!(read().len(), 20);
    assert!(std::ptr::eq(&functions()[f.index()], f));
    let CapValue::Str(s) = f.call(&scope(Runtime::Lua, &kv), vec![]).unwrap() else {
        panic!("a string")
    };
    assert!(s.ends_with(b"Z"));
    let info = module_functions("hull:log")
        .find(|f| f.lua == Some("info"))
        .unwrap();
    assert!(info.arg_form() == ArgForm::Text && info.reading().is_none());
    let out = info.call(&scope(Runtime::Js, &kv), vec![CapValue::Str(b"x".to_vec())]);
    assert_eq!(out.unwrap(), CapValue::Nothing);
}

#[test]
fn crypto_argument_errors_name_the_runtimes_types() {
    let kv = Kv::local();
    let f = find("hull:crypto", "sha256");
    let lua = err(f.call(&scope(Runtime::Lua, &kv), vec![]));
    assert_eq!(lua.code, "crypto.argument");
    assert_eq!(
        lua.message,
        "crypto.sha256: argument 1 must be a string, got nil"
    );
    let js = err(f.call(&scope(Runtime::Js, &kv), vec![CapValue::Record(vec![])]));
    assert_eq!(
        js.message,
        "crypto.sha256: argument 1 must be a string or bytes (an ArrayBuffer or a Uint8Array), got object"
    );
    let hex = f.call(
        &scope(Runtime::Js, &kv),
        vec![CapValue::Bytes(b"abc".to_vec())],
    );
    assert!(matches!(hex, Ok(CapValue::Str(h)) if h.starts_with(b"ba7816bf")));
}

#[test]
fn crypto_counts_and_key_pairs() {
    let kv = Kv::local();
    let random = find("hull:crypto", "random");
    let lua = scope(Runtime::Lua, &kv);
    assert!(
        matches!(random.call(&lua, vec![CapValue::Int(4)]), Ok(CapValue::Bytes(b)) if b.len() == 4)
    );
    assert_eq!(
        err(random.call(&lua, vec![CapValue::Num(1.5)])).code,
        "crypto.range"
    );
    let js = scope(Runtime::Js, &kv);
    // JS reads a missing count as 0: out of range, like Hull's RangeError.
    assert_eq!(err(random.call(&js, vec![])).code, "crypto.range");
    assert_eq!(
        err(random.call(&lua, vec![])).message,
        "crypto.random: argument 1 must be a number, got nil"
    );
    let pair = find("hull:crypto", "ed25519_keypair").call(&lua, vec![]);
    assert!(matches!(pair, Ok(CapValue::Results(r)) if r.len() == 2 && r[0].0 == "publicKey"));
}

#[test]
fn kv_reads_whole_js_numbers_as_integers() {
    let kv = Kv::local();
    let set = find("hull:kv", "set");
    let get = find("hull:kv", "get");
    let js = scope(Runtime::Js, &kv);
    let lua = scope(Runtime::Lua, &kv);
    let key = |k: &str| CapValue::Str(k.as_bytes().to_vec());
    assert_eq!(
        set.call(&js, vec![key("a"), CapValue::Num(3.0)]),
        Ok(CapValue::Nothing)
    );
    assert_eq!(get.call(&js, vec![key("a")]), Ok(CapValue::Int(3)));
    set.call(&lua, vec![key("b"), CapValue::Num(3.0)]).unwrap();
    assert_eq!(get.call(&lua, vec![key("b")]), Ok(CapValue::Num(3.0)));
    assert_eq!(get.call(&lua, vec![key("none")]), Ok(CapValue::Null));
    let bad = err(get.call(&lua, vec![CapValue::Int(1)]));
    assert_eq!(bad.code, "kv.argument");
    assert!(
        bad.message.starts_with("kv.get: key must be"),
        "{}",
        bad.message
    );
    assert!(!get.can_wait(&scope(Runtime::Lua, &kv)));
}

#[test]
fn http_checks_its_arguments_before_the_manifest() {
    let kv = Kv::local();
    let get = find("hull:http", "get");
    let lua = scope(Runtime::Lua, &kv);
    let e = err(get.call(&lua, vec![]));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "http.argument",
            "http.get failed: the URL must be a string, got nil"
        )
    );
    let url = CapValue::Str(b"https://example.com/".to_vec());
    let opts = CapValue::Record(vec![(
        "headers".into(),
        CapValue::Record(vec![("x".into(), CapValue::Bool(true))]),
    )]);
    let e = err(get.call(&lua, vec![url.clone(), opts]));
    assert_eq!(
        e.message,
        "http.get failed: a header value must be a string, got boolean"
    );
    let e = err(get.call(&lua, vec![url]));
    assert_eq!(e.code, "http.not_configured");
    assert!(get.can_wait(&scope(Runtime::Lua, &kv)));
}

#[test]
fn smtp_and_env_answer_as_hull_does() {
    let kv = Kv::local();
    let lua = scope(Runtime::Lua, &kv);
    let send = find("hull:smtp", "send");
    assert_eq!(err(send.call(&lua, vec![])).code, "smtp.not_configured");
    let get = find("hull:env", "get");
    assert_eq!(
        err(get.call(&lua, vec![CapValue::Str(b"HOME".to_vec())])).code,
        "env.not_configured"
    );
    let e = err(get.call(&lua, vec![CapValue::Other("function")]));
    assert_eq!(
        e.message,
        "env.get: the name must be a string, got function"
    );
}

#[test]
fn values_name_their_types_and_print_numbers_per_runtime() {
    assert_eq!(CapValue::Nothing.type_name(Runtime::Lua), "nil");
    assert_eq!(CapValue::Nothing.type_name(Runtime::Js), "undefined");
    assert_eq!(CapValue::List(vec![]).type_name(Runtime::Js), "array");
    assert_eq!(CapValue::Num(2.0).text(Runtime::Lua).unwrap(), "2.0");
    assert_eq!(CapValue::Num(2.0).text(Runtime::Js).unwrap(), "2");
    assert_eq!(CapValue::Num(0.5).text(Runtime::Js).unwrap(), "0.5");
    let rec = CapValue::Record(vec![
        ("a".into(), CapValue::Nothing),
        (
            "b".into(),
            CapValue::List(vec![CapValue::Int(1), CapValue::Null]),
        ),
    ]);
    assert_eq!(rec.to_json(), serde_json::json!({"b": [1, null]}));
}

#[test]
fn json_hands_the_text_through_and_names_a_wrong_argument() {
    let kv = Kv::local();
    let encode = find("hull:json", "encode");
    let decode = find("hull:json", "decode");
    assert_eq!(encode.arg_form(), ArgForm::Json);
    assert_eq!(decode.arg_form(), ArgForm::Values);
    let text = CapValue::Str(br#"{"a":1}"#.to_vec());
    let lua = scope(Runtime::Lua, &kv);
    assert_eq!(encode.call(&lua, vec![text.clone()]).unwrap(), text);
    assert_eq!(
        encode.call(&lua, vec![]).unwrap(),
        CapValue::Str(b"null".to_vec())
    );
    assert_eq!(
        decode.call(&lua, vec![text.clone()]).unwrap(),
        CapValue::Json(br#"{"a":1}"#.to_vec())
    );
    let e = decode.call(&lua, vec![CapValue::Int(1)]).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "json.argument",
            "json.decode: expected a string, got number"
        )
    );
    // JS reads it as JSON.parse does, as `String(v)`.
    let js = scope(Runtime::Js, &kv);
    for (arg, text) in [
        (CapValue::Null, "null"),
        (CapValue::Int(5), "5"),
        (CapValue::Bool(true), "true"),
        (CapValue::Nothing, "undefined"),
        (CapValue::Record(vec![]), "[object Object]"),
    ] {
        let got = decode.call(&js, vec![arg]).unwrap();
        assert_eq!(got, CapValue::Json(text.as_bytes().to_vec()));
    }
    let e = json_failed(crate::json::JsonOp::Encode, "x");
    assert_eq!(
        (e.code, e.message.as_str()),
        ("json.encode", "json.encode: x")
    );
}

/// A scope over a fresh in-memory SQLite database.
fn with_db<R>(runtime: Runtime, f: impl for<'a> FnOnce(&'a dyn Fn(Origin) -> Scope<'a>) -> R) -> R {
    use cove_db::{Db, SharedDb, WriteLock};
    let kv = Kv::local();
    let db = SharedDb::new(
        Db::open(std::path::Path::new(":memory:"), WriteLock::default()).expect("memory db"),
    );
    let make = |origin| Scope {
        db: Some(&db),
        origin,
        ..scope(runtime, &kv)
    };
    f(&make)
}

use cove_db::Origin;

fn s(text: &str) -> CapValue {
    CapValue::Str(text.as_bytes().to_vec())
}

#[test]
fn db_statements_bind_their_parameters_and_return_rows_or_counts() {
    let (query, exec) = (find("hull:db", "query"), find("hull:db", "exec"));
    with_db(Runtime::Lua, |scope| {
        let app = scope(Origin::App);
        let made = exec.call(&app, vec![s("CREATE TABLE t (a, b, c)")]);
        assert_eq!(made, Ok(CapValue::Int(0)));
        let params = CapValue::List(vec![
            CapValue::Int(1),
            CapValue::Nothing,
            CapValue::Bool(true),
        ]);
        let insert = vec![s("INSERT INTO t VALUES (?, ?, ?)"), params];
        assert_eq!(exec.call(&app, insert), Ok(CapValue::Int(1)));
        assert_eq!(
            find("hull:db", "last_id").call(&app, vec![]),
            Ok(CapValue::Int(1))
        );
        let CapValue::Rows(set) = query.call(&app, vec![s("SELECT a, b, c FROM t")]).unwrap()
        else {
            panic!("rows")
        };
        use cove_db::Value as V;
        assert_eq!(set.columns, ["a", "b", "c"]);
        assert_eq!(set.rows, [vec![V::Integer(1), V::Null, V::Integer(1)]]);
        // With the binding's builder the rows go there, as they are read.
        let mut seen = Vec::new();
        let started = query
            .start_into(&app, vec![s("SELECT a FROM t")], &mut |cols, row| {
                seen.push((cols.join(","), row.get(0).into()));
                Ok(())
            })
            .unwrap();
        assert!(matches!(started, Started::Done(CapValue::Nothing)));
        assert_eq!(seen, [("a".to_string(), V::Integer(1))]);
    });
}

#[test]
fn db_mistakes_are_argument_errors_in_each_runtimes_words() {
    let query = find("hull:db", "query");
    with_db(Runtime::Lua, |scope| {
        let app = scope(Origin::App);
        let e = query.call(&app, vec![CapValue::Nothing]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("db.argument", "db.query: the SQL must be a string, got nil")
        );
        let e = query.call(&app, vec![s("SELECT ?"), s("x")]).unwrap_err();
        assert_eq!(
            e.message,
            "db.query: parameters must be a table (an array of values), got string"
        );
        let nested = CapValue::List(vec![CapValue::List(vec![])]);
        let e = query.call(&app, vec![s("SELECT ?"), nested]).unwrap_err();
        assert_eq!(
            e.message,
            "db.query: parameter 1 is a table; pass strings, numbers, booleans or nil"
        );
        // An empty table is no parameters.
        let none = CapValue::Record(vec![]);
        assert!(query.call(&app, vec![s("SELECT 1 AS x"), none]).is_ok());
    });
    with_db(Runtime::Js, |scope| {
        let app = Scope {
            is_async: true,
            ..scope(Origin::App)
        };
        let e = query.call(&app, vec![s("SELECT ?"), s("x")]).unwrap_err();
        assert_eq!(
            e.message,
            "db.queryAsync: params must be an array, got string"
        );
        let e = query
            .call(
                &app,
                vec![
                    s("SELECT ?"),
                    CapValue::List(vec![CapValue::Record(vec![])]),
                ],
            )
            .unwrap_err();
        assert_eq!(
            e.message,
            "db.queryAsync: parameter 1 is object; pass strings, numbers, booleans, null or an ArrayBuffer/Uint8Array"
        );
    });
}

#[test]
fn only_the_stdlibs_origin_reaches_the_reserved_tables() {
    let (query, exec) = (find("hull:db", "query"), find("hull:db", "exec"));
    with_db(Runtime::Lua, |scope| {
        let made = exec.call(&scope(Origin::Stdlib), vec![s("CREATE TABLE _hull_x (a)")]);
        assert_eq!(made, Ok(CapValue::Int(0)));
        let read = || vec![s("SELECT a FROM _hull_x")];
        assert!(query.call(&scope(Origin::Stdlib), read()).is_ok());
        let refused = query.call(&scope(Origin::App), read()).unwrap_err();
        assert_eq!(refused.code, "db.reserved");
    });
}

#[test]
fn a_statement_waits_only_on_postgres() {
    let (query, last_id) = (find("hull:db", "query"), find("hull:db", "last_id"));
    with_db(Runtime::Lua, |scope| {
        assert!(!query.can_wait(&scope(Origin::App)));
        assert!(query.returns_rows() && !last_id.returns_rows());
    });
    let kv = Kv::local();
    let e = query
        .call(&scope(Runtime::Lua, &kv), vec![s("SELECT 1")])
        .unwrap_err();
    assert_eq!(e.code, "db.unavailable");
}

fn res_fn(name: &str) -> &'static CapFn {
    methods_of("Response")
        .chain(module_functions("hull:app"))
        .find(|f| f.lua == Some(name))
        .expect("a res function")
}

/// `res`'s methods through the table: the same checks and messages for
/// both runtimes, only the call's spelling differs (`res:status` in Lua,
/// `res.status` in JS).
#[test]
fn res_methods_build_the_response_in_progress() {
    let csp = std::rc::Rc::new(crate::Csp::Disabled);
    let mut res = cove_core::Response::new();
    res::begin(&mut res, &csp);
    let kv = Kv::local();
    let lua = scope(Runtime::Lua, &kv);
    let js = scope(Runtime::Js, &kv);
    let status = res_fn("status");
    assert!(status.chains() && status.method_of() == Some("Response") && status.reads_in_place());
    // A numeric string is a status, as Hull takes it.
    status.call(&lua, vec![s(" 201 ")]).unwrap();
    let e = err(status.call(&lua, vec![s("abc")]));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "res.argument",
            "res:status: status must be an integer, got \"abc\""
        )
    );
    let e = err(status.call(&js, vec![CapValue::Num(1.5)]));
    assert_eq!(e.message, "res.status: status must be an integer, got 1.5");
    let e = err(status.call(&lua, vec![CapValue::Int(99)]));
    assert_eq!(e.code, "res.invalid");
    assert!(e.message.starts_with("res:status: "), "{}", e.message);
    let header = res_fn("header");
    header.call(&js, vec![s("X-A"), CapValue::Int(7)]).unwrap();
    let e = err(header.call(&lua, vec![s("X-B"), CapValue::List(vec![])]));
    assert_eq!(
        e.message,
        "res:header: the value must be a string, got table"
    );
    let e = err(header.call(&lua, vec![s("X-B"), s("\u{0}")]));
    assert_eq!(e.code, "res.invalid");
    let e = err(header.call(&lua, vec![s("X-C"), CapValue::Str(vec![0xff])]));
    assert_eq!(e.message, "res:header: the value is not valid UTF-8");
    // The reader encodes res.json's data; JS `null` is no status.
    let json = res_fn("json");
    let data = CapValue::Record(vec![("a".into(), CapValue::Int(1))]);
    json.call(&js, vec![data, CapValue::Null]).unwrap();
    assert!(res::end(&mut res));
    assert_eq!(res.status, 201);
    assert_eq!(&res.body[..], b"{\"a\":1}");
    assert!(res.headers.iter().any(|(k, v)| k == "X-A" && v == "7"));
    assert!(!res::end(&mut res));
    // The slot is empty again for the next call.
    let mut next = cove_core::Response::new();
    res::begin(&mut next, &csp);
    assert!(res::with_response(|r| r.status == 200 && r.body.is_empty()).unwrap());
    // A call a panic left lent (no `end`) is over once the next begins:
    // after that one's end, `res` refuses again.
    let mut after = cove_core::Response::new();
    res::begin(&mut after, &csp);
    status.call(&lua, vec![CapValue::Int(204)]).unwrap();
    assert!(res::end(&mut after));
    assert_eq!(after.status, 204);
    assert!(!res::end(&mut next));
    assert_eq!(
        err(status.call(&lua, vec![CapValue::Int(200)])).code,
        "res.ended"
    );
}

#[test]
fn res_methods_outside_a_request_and_app_publish() {
    let kv = Kv::local();
    let lua = scope(Runtime::Lua, &kv);
    let e = err(res_fn("text").call(&lua, vec![s("hi")]));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "res.ended",
            "res:text: this request has ended; use res only inside its own handler"
        )
    );
    let publish = res_fn("publish");
    assert!(publish.method_of().is_none() && !publish.chains() && publish.reads_in_place());
    let e = err(publish.call(&lua, vec![s("t"), s("x")]));
    assert_eq!(e.code, "app.ended");
    let e = err(publish.call(&scope(Runtime::Js, &kv), vec![CapValue::Int(1), s("x")]));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "app.argument",
            "app.publish: the topic must be a string, got number"
        )
    );
    // An event and a message: data as JSON unless a string.
    let mut res = cove_core::Response::new();
    res::begin(&mut res, &std::rc::Rc::new(crate::Csp::Disabled));
    let event = res_fn("event");
    event
        .call(&lua, vec![CapValue::Num(2.0), s("tick"), CapValue::Nothing])
        .unwrap();
    publish
        .call(&lua, vec![s("room"), CapValue::Int(3)])
        .unwrap();
    let e = err(res_fn("event").call(&lua, vec![s("x"), s("a\nb")]));
    assert_eq!(e.code, "res.invalid");
    assert!(res::end(&mut res));
}

fn ws_fn(name: &str) -> &'static CapFn {
    methods_of("WebSocket")
        .find(|f| f.lua == Some(name))
        .expect("a ws method")
}

/// `ws`'s methods through the table: commands for the connection whose
/// event is being handled (in a call with values, the first value is the
/// connection's id), the same codes in both runtimes.
#[test]
fn ws_methods_queue_commands_for_their_own_connection() {
    let kv = Kv::local();
    let lua = scope(Runtime::Lua, &kv);
    let js = scope(Runtime::Js, &kv);
    let names: Vec<_> = methods_of("WebSocket").map(|f| f.lua.unwrap()).collect();
    assert_eq!(names, ["send", "close", "subscribe", "unsubscribe"]);
    let send = ws_fn("send");
    assert!(send.reads_in_place() && !send.chains());
    // Outside any event.
    let e = err(send.call(&lua, vec![CapValue::Int(7), s("hi")]));
    assert_eq!(e.code, "ws.ended");
    assert!(e
        .message
        .starts_with("ws:send: this connection's handler is not running"));
    let mut res = cove_core::Response::new();
    res.start_socket_turn(7, cove_core::WsEvent::Open);
    res::begin(&mut res, &std::rc::Rc::new(crate::Csp::Disabled));
    send.call(&lua, vec![CapValue::Int(7), s("hi")]).unwrap();
    send.call(
        &js,
        vec![CapValue::Int(7), CapValue::Int(3), CapValue::Bool(true)],
    )
    .unwrap();
    let list = CapValue::List(vec![CapValue::Int(1)]);
    send.call(&lua, vec![CapValue::Int(7), list]).unwrap();
    ws_fn("subscribe")
        .call(&js, vec![CapValue::Int(7), s("room")])
        .unwrap();
    ws_fn("unsubscribe")
        .call(&js, vec![CapValue::Int(7), s("room")])
        .unwrap();
    ws_fn("close").call(&lua, vec![CapValue::Int(7)]).unwrap();
    // Another connection, a missing object, bad arguments.
    let e = err(send.call(&js, vec![CapValue::Int(8), s("x")]));
    assert_eq!(e.code, "ws.ended");
    assert!(
        e.message.starts_with("ws.send: this connection's"),
        "{}",
        e.message
    );
    let e = err(send.call(&lua, vec![s("not a ws"), s("x")]));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "ws.argument",
            "ws:send: call it on a connection's ws object with a colon: ws:send(...)"
        )
    );
    let close = ws_fn("close");
    let e = err(close.call(&js, vec![CapValue::Int(7), CapValue::Int(1005)]));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "ws.invalid",
            "ws.close: a close code is 1000-1003, 1007-1014 or 3000-4999, got 1005"
        )
    );
    let e = err(close.call(&lua, vec![CapValue::Int(7), s("x")]));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "ws.argument",
            "ws:close: the code must be an integer, got string"
        )
    );
    let e = err(ws_fn("subscribe").call(&lua, vec![CapValue::Int(7), CapValue::Int(1)]));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "ws.argument",
            "ws:subscribe: the topic must be a string, got number"
        )
    );
    assert!(res::end(&mut res));
    let turn = res.socket_turn().unwrap().clone();
    use cove_core::WsCommand;
    assert_eq!(
        turn.commands,
        [
            WsCommand::Send {
                data: b"hi".to_vec().into(),
                binary: false
            },
            WsCommand::Send {
                data: b"3".to_vec().into(),
                binary: true
            },
            WsCommand::Send {
                data: b"[1]".to_vec().into(),
                binary: false
            },
            WsCommand::Subscribe("room".into()),
            WsCommand::Unsubscribe("room".into()),
            WsCommand::Close {
                code: 1000,
                reason: String::new()
            },
        ]
    );
}

/// `app.get` … `app.use_post` check their arguments here for both
/// runtimes and add the handler the binding hands over; the registry's own
/// refusals keep their codes.
#[test]
fn routes_and_middleware_register_the_handler_handed_over() {
    let get = find("hull:app", "get");
    let use_post = find("hull:app", "usePost");
    assert_eq!(
        (get.handler_arg(), use_post.handler_arg()),
        (Some(1), Some(2))
    );
    assert_eq!(use_post.lua, Some("use_post"));
    let f = CapValue::Other("function");
    let mut reg: crate::Registry<&str> = crate::Registry::default();
    get.register(Runtime::Lua, &[s("/a"), f.clone()], Some("h0"), &mut reg)
        .unwrap();
    use_post
        .register(
            Runtime::Js,
            &[s("*"), s("/a"), f.clone()],
            Some("h1"),
            &mut reg,
        )
        .unwrap();
    let refused = |f: &CapFn, rt, args: &[CapValue], h: Option<&'static str>, reg: &mut _| {
        let e = f.register(rt, args, h, reg).unwrap_err();
        (e.code, e.message)
    };
    let got = refused(get, Runtime::Lua, &[], None, &mut reg);
    assert_eq!(got.0, "app.argument");
    assert_eq!(got.1, "app.get: the pattern must be a string, got nil");
    let got = refused(get, Runtime::Js, &[s("/b")], None, &mut reg);
    assert_eq!(
        got.1,
        "app.get: the handler must be a function, got undefined"
    );
    let args = [s("GET"), s("/b"), CapValue::Int(1)];
    let got = refused(use_post, Runtime::Lua, &args, None, &mut reg);
    assert_eq!(
        got.1,
        "app.use_post: the middleware must be a function, got number"
    );
    let args = [CapValue::Nothing, s("/b"), f.clone()];
    let got = refused(use_post, Runtime::Js, &args, Some("h"), &mut reg);
    assert_eq!(
        got.1,
        "app.usePost: the method must be a string, got undefined"
    );
    let args = [s("GET"), s("no-slash"), f.clone()];
    let got = refused(
        find("hull:app", "use"),
        Runtime::Lua,
        &args,
        Some("h"),
        &mut reg,
    );
    assert_eq!(got.0, "app.invalid");
    assert!(
        got.1
            .starts_with("app.use: route pattern must start with '/'"),
        "{}",
        got.1
    );
    // `app.ws`: a table of handlers, which the binding makes into one
    // dispatcher (handed over as the handler).
    let ws = find("hull:app", "ws");
    assert!(ws.takes_handlers() && !get.takes_handlers());
    let handlers = |fields: Vec<(&str, CapValue)>| {
        CapValue::Record(fields.into_iter().map(|(k, v)| (k.into(), v)).collect())
    };
    ws.register(
        Runtime::Lua,
        &[s("/ws"), handlers(vec![("message", f.clone())])],
        Some("d0"),
        &mut reg,
    )
    .unwrap();
    for (rt, arg, want) in [
        (
            Runtime::Lua,
            CapValue::Int(5),
            "app.ws: the handlers must be a table {open = fn, message = fn, close = fn}, got number",
        ),
        (
            Runtime::Js,
            CapValue::Null,
            "app.ws: the handlers must be an object { open, message, close }, got null",
        ),
        (
            Runtime::Js,
            handlers(vec![("opn", f.clone())]),
            "app.ws: unknown handler \"opn\" (the handlers are open, message and close)",
        ),
        (
            Runtime::Lua,
            handlers(vec![("close", s("x"))]),
            "app.ws: handlers.close must be a function, got string",
        ),
        (
            Runtime::Lua,
            CapValue::List(vec![f.clone()]),
            "app.ws: unknown handler \"1\" (the handlers are open, message and close)",
        ),
    ] {
        let got = refused(ws, rt, &[s("/ws2"), arg], Some("d"), &mut reg);
        assert_eq!((got.0, got.1.as_str()), ("app.argument", want));
    }
    // Only through `register`: not a call that returns a value.
    let kv = Kv::local();
    assert_eq!(
        err(get.call(&scope(Runtime::Lua, &kv), vec![])).code,
        "internal"
    );
    let done = reg.finish();
    assert_eq!(done.handlers, ["h0", "h1", "d0"]);
    assert_eq!(done.routes.route_count(), 2);
    let got = refused(get, Runtime::Lua, &[s("/c"), f], Some("h2"), &mut reg);
    assert_eq!(got.0, "app.loaded");
    assert!(got.1.contains("while the app loads"), "{}", got.1);
}

#[test]
fn the_manifest_is_given_to_the_registry_and_read_back_from_it() {
    let manifest = find("hull:app", "manifest");
    let get = find("hull:app", "getManifest");
    assert_eq!(get.lua, Some("get_manifest"));
    assert!(manifest.uses_registry() && manifest.handler_arg().is_none());
    let mut reg: crate::Registry<&str> = crate::Registry::default();
    let read = |reg: &mut crate::Registry<&str>| get.register(Runtime::Js, &[], None, reg);
    assert_eq!(read(&mut reg).unwrap(), CapValue::Nothing);
    // Not a table: refused, the message in each runtime's words.
    for (rt, got) in [
        (
            Runtime::Lua,
            "app.manifest: the argument must be a table, got string",
        ),
        (
            Runtime::Js,
            "app.manifest: the argument must be an object, got string",
        ),
    ] {
        let e = manifest
            .register(rt, &[s("hosts")], None, &mut reg)
            .unwrap_err();
        assert_eq!((e.code, e.message.as_str()), ("app.argument", got));
    }
    // A field of the wrong shape.
    let bad = CapValue::Record(vec![("env".into(), s("HOME"))]);
    let e = manifest
        .register(Runtime::Lua, &[bad], None, &mut reg)
        .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "app.invalid",
            "app.manifest: `env` must be a list of strings"
        )
    );
    // Functions are left out, as JSON.stringify leaves them; what is read
    // back is what is in force.
    let m = CapValue::Record(vec![
        ("env".into(), CapValue::List(vec![s("HOME")])),
        ("check".into(), CapValue::Other("function")),
    ]);
    manifest
        .register(Runtime::Lua, &[m], None, &mut reg)
        .unwrap();
    assert_eq!(reg.env_allow(), Some(&["HOME".to_string()][..]));
    assert_eq!(
        read(&mut reg).unwrap(),
        CapValue::Json(br#"{"env":["HOME"]}"#.to_vec())
    );
    let e = manifest
        .register(Runtime::Lua, &[CapValue::List(vec![])], None, &mut reg)
        .unwrap_err();
    assert_eq!(e.code, "app.invalid");
    // A Lua table with nothing in it, after loading: refused as late.
    let mut late: crate::Registry<&str> = crate::Registry::default();
    late.finish();
    let e = manifest
        .register(Runtime::Lua, &[CapValue::List(vec![])], None, &mut late)
        .unwrap_err();
    assert_eq!(e.code, "app.loaded");
    // `app.config` and JS's `app.static` take anything and do nothing.
    let static_ = find("hull:app", "static");
    assert_eq!(static_.lua, None);
    for f in [find("hull:app", "config"), static_] {
        let got = f.register(Runtime::Js, &[CapValue::Int(1)], None, &mut late);
        assert_eq!(got.unwrap(), CapValue::Nothing);
    }
}
