//! Every route of examples/hello and examples/rest_api, in both versions of
//! each app: every check takes the runtime, and `both!` turns it into a test
//! against `app.lua` and one against `app.js`. Where the two apps answer
//! differently (the runtime's name, the echo of a missing body) the check
//! says so explicitly.

use serde_json::json;

use crate::util::{both, example_file, Lang, Server};

fn hello(lang: Lang) -> Server {
    Server::start(&example_file("hello", lang.ext()), &[])
}

fn rest(lang: Lang) -> Server {
    Server::start(&example_file("rest_api", lang.ext()), &[])
}

both!(
    hello_root_in_english_and_hungarian,
    hello_visits_lists_the_last_20,
    hello_health,
    hello_echo,
    hello_greet_get_and_post,
    hello_head_has_get_headers_and_no_body,
    rest_create_list_and_get,
    rest_missing_task_is_404,
    rest_create_validation,
    rest_errors_in_hungarian,
    rest_put_updates_title_and_done,
    rest_delete,
);

fn hello_root_in_english_and_hungarian(lang: Lang) {
    // Each app names its own runtime in its welcome message.
    let (en, hu) = match lang {
        Lang::Lua => ("Hello from Cove + Lua!", "Szia a Cove + Lua-ból!"),
        Lang::Js => (
            "Hello from Cove + JavaScript!",
            "Szia a Cove + JavaScript-ből!",
        ),
    };
    let s = hello(lang);
    let r = s.get("/");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let v = r.json();
    assert_eq!(v["message"], en);
    assert_eq!(v["lang"], "en");
    let t = v["time"].as_str().expect("time is a string");
    assert_eq!(t.len(), "2026-01-01T00:00:00Z".len(), "{t}");
    assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");

    let v = s.get("/?lang=hu").json();
    assert_eq!(v["message"], hu);
    assert_eq!(v["lang"], "hu");
    let v = s
        .request("GET", "/", &[("Accept-Language", "hu-HU,hu;q=0.9")], None)
        .json();
    assert_eq!(v["lang"], "hu");
    let v = s
        .request("GET", "/", &[("Accept-Language", "en-US")], None)
        .json();
    assert_eq!(v["lang"], "en");
}

fn hello_visits_lists_the_last_20(lang: Lang) {
    let s = hello(lang);
    assert_eq!(s.get("/visits").body, b"[]");
    for _ in 0..22 {
        assert_eq!(s.get("/").status, 200);
    }
    let r = s.get("/visits");
    assert_eq!(r.status, 200);
    let rows = r.json();
    let rows = rows.as_array().expect("array");
    assert_eq!(rows.len(), 20);
    let ids: Vec<i64> = rows.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, (3..=22).rev().collect::<Vec<_>>());
    for row in rows {
        assert_eq!(row["path"], "/");
        assert!(row["ts"].as_i64().unwrap() > 1_600_000_000, "{row}");
    }
}

fn hello_health(lang: Lang) {
    let r = hello(lang).get("/health");
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["status"], "ok");
    // Hull's names: its e2e scripts check for "quickjs".
    let runtime = match lang {
        Lang::Lua => "lua",
        Lang::Js => "quickjs",
    };
    assert_eq!(v["runtime"], runtime);
    assert!(v["uptime"].as_i64().unwrap() >= 0, "{v}");
}

fn hello_echo(lang: Lang) {
    let s = hello(lang);
    let r = s.post("/echo", "ping");
    assert_eq!((r.status, r.json()), (200, json!({"body": "ping"})));
    // No body: Lua's `{ body = nil }` is an empty table, which encodes as
    // []; JavaScript keeps the key with null.
    let empty = match lang {
        Lang::Lua => "[]",
        Lang::Js => r#"{"body":null}"#,
    };
    let r = s.request("POST", "/echo", &[], None);
    assert_eq!((r.status, r.text().as_str()), (200, empty));
}

fn hello_greet_get_and_post(lang: Lang) {
    let s = hello(lang);
    let r = s.get("/greet/World");
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({"greeting": "Hello, World!", "lang": "en"}));
    let r = s.get("/greet/J%C3%A1nos?lang=hu");
    assert_eq!(r.json(), json!({"greeting": "Szia, János!", "lang": "hu"}));
    let r = s.post("/greet/Ann", "hi there");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        json!({"greeting": "Hello, Ann!", "lang": "en", "body": "hi there"})
    );
    let r = s.request(
        "POST",
        "/greet/Ann",
        &[("Accept-Language", "hu")],
        Some(b"x"),
    );
    assert_eq!(
        r.json(),
        json!({"greeting": "Szia, Ann!", "lang": "hu", "body": "x"})
    );
}

fn hello_head_has_get_headers_and_no_body(lang: Lang) {
    let s = hello(lang);
    let get = s.get("/");
    let mut conn = s.conn();
    let head = conn.request("HEAD", "/", &[], None);
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    let names = |r: &crate::util::Response| {
        let mut n: Vec<String> = r.headers.iter().map(|(n, _)| n.clone()).collect();
        n.sort();
        n
    };
    assert_eq!(names(&head), names(&get));
    for h in ["content-type", "content-length"] {
        assert_eq!(head.header(h), get.header(h), "{h}");
    }
    // Nothing of a body was sent: the connection serves the next request.
    assert_eq!(conn.request("GET", "/health", &[], None).status, 200);
}

fn rest_create_list_and_get(lang: Lang) {
    let s = rest(lang);
    assert_eq!(s.get("/tasks").text(), "[]");
    let r = s.post("/tasks", r#"{"title":"first"}"#);
    assert_eq!(r.status, 201);
    assert_eq!(r.json(), json!({"id": 1, "title": "first", "done": 0}));
    assert_eq!(s.post("/tasks", r#"{"title":"second"}"#).json()["id"], 2);

    // Same second: newest id first.
    let list = s.get("/tasks").json();
    let titles: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["second", "first"]);

    let r = s.get("/tasks/1");
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(
        (v["id"].as_i64(), v["title"].as_str()),
        (Some(1), Some("first"))
    );
    assert_eq!(v["done"], 0);
    assert!(v["created_at"].as_i64().unwrap() > 1_600_000_000);
}

fn rest_missing_task_is_404(lang: Lang) {
    let s = rest(lang);
    for (method, body) in [("GET", None), ("PUT", Some(&b"{}"[..])), ("DELETE", None)] {
        let r = s.request(method, "/tasks/99", &[], body);
        assert_eq!(r.status, 404, "{method}");
        assert_eq!(r.json(), json!({"error": "task not found"}), "{method}");
    }
}

fn rest_errors_in_hungarian(lang: Lang) {
    let s = rest(lang);
    let hu = [("Accept-Language", "hu-HU,hu;q=0.9,en;q=0.8")];
    let r = s.request("GET", "/tasks/99", &hu, None);
    assert_eq!(
        (r.status, r.json()),
        (404, json!({"error": "a feladat nem található"}))
    );
    let r = s.request("POST", "/tasks", &hu, Some(b"{"));
    assert_eq!(
        (r.status, r.json()),
        (400, json!({"error": "érvénytelen JSON"}))
    );
    // English is the default and what an unknown language gets.
    let r = s.request("GET", "/tasks/99", &[("Accept-Language", "fr")], None);
    assert_eq!(r.json(), json!({"error": "task not found"}));
}

fn rest_create_validation(lang: Lang) {
    let s = rest(lang);
    for bad in ["{not json", "", "null"] {
        let r = s.request("POST", "/tasks", &[], Some(bad.as_bytes()));
        assert_eq!(r.status, 400, "{bad:?}");
        assert_eq!(r.json(), json!({"error": "invalid JSON"}), "{bad:?}");
    }
    for missing in ["{}", r#"{"title":""}"#, r#"{"title":"  "}"#] {
        let r = s.post("/tasks", missing);
        assert_eq!(r.status, 400, "{missing}");
        assert_eq!(r.json(), json!({"errors": {"title": "is required"}}));
    }
    // hull.validate's messages for the other rules.
    let r = s.post("/tasks", r#"{"title":7}"#);
    assert_eq!(
        (r.status, r.json()),
        (400, json!({"errors": {"title": "must be a string"}}))
    );
    let long = format!(r#"{{"title":"{}"}}"#, "x".repeat(201));
    assert_eq!(
        s.post("/tasks", &long).json(),
        json!({"errors": {"title": "must be at most 200 characters"}})
    );
    assert_eq!(s.get("/tasks").text(), "[]", "nothing was inserted");
}

fn rest_put_updates_title_and_done(lang: Lang) {
    let s = rest(lang);
    s.post("/tasks", r#"{"title":"a"}"#);
    let put = |body: &str| s.request("PUT", "/tasks/1", &[], Some(body.as_bytes()));
    let r = put(r#"{"done":true}"#);
    assert_eq!((r.status, r.json()), (200, json!({"ok": true})));
    let v = s.get("/tasks/1").json();
    assert_eq!(
        (v["title"].as_str(), v["done"].as_i64()),
        (Some("a"), Some(1))
    );
    // A missing title keeps the old one; a missing done resets it to 0.
    assert_eq!(put(r#"{"title":"b"}"#).json(), json!({"ok": true}));
    let v = s.get("/tasks/1").json();
    assert_eq!(
        (v["title"].as_str(), v["done"].as_i64()),
        (Some("b"), Some(0))
    );
    let r = put(r#"{"title":""}"#);
    assert_eq!(
        (r.status, r.json()),
        (400, json!({"errors": {"title": "must not be empty"}}))
    );
    let r = put("nope");
    assert_eq!(
        (r.status, r.json()),
        (400, json!({"error": "invalid JSON"}))
    );
}

fn rest_delete(lang: Lang) {
    let s = rest(lang);
    s.post("/tasks", r#"{"title":"a"}"#);
    s.post("/tasks", r#"{"title":"b"}"#);
    let r = s.request("DELETE", "/tasks/1", &[], None);
    assert_eq!((r.status, r.json()), (200, json!({"ok": true})));
    assert_eq!(s.get("/tasks/1").status, 404);
    assert_eq!(s.request("DELETE", "/tasks/1", &[], None).status, 404);
    let list = s.get("/tasks").json();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["title"], "b");
}
