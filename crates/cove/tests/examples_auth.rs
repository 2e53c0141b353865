//! examples/auth, examples/crud_with_auth and examples/middleware over real
//! HTTP, two workers, in both versions of each app (`both!` makes a test
//! against app.lua and one against app.js from each check). Requests go on
//! fresh connections, so they spread over both workers: cookies, rate
//! limits, request ids and the request counter must hold across them.
//! Every registration hashes a password (PBKDF2, slow in debug builds), so
//! the checks register few users.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::util::{both, example_file, Lang, Response, Server};

both!(
    auth_register_login_me_logout,
    crud_tasks_belong_to_their_user,
    middleware_request_ids_cors_and_counter,
    middleware_rate_limit_is_one_for_all_workers,
);

fn post_json(s: &Server, path: &str, body: Value, headers: &[(&str, &str)]) -> Response {
    let mut all = vec![("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    s.request("POST", path, &all, Some(body.to_string().as_bytes()))
}

/// Register (201) and log in; returns the `Cookie` header value to send.
fn sign_up(s: &Server, lang: Lang, email: &str, name: &str) -> String {
    let account = json!({"email": email, "password": "correct horse", "name": name});
    let r = post_json(s, "/register", account.clone(), &[]);
    assert_eq!(r.status, 201, "{}", r.text());
    let r = post_json(s, "/login", account, &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    let set = r.header("set-cookie").expect("login sets a cookie");
    let pair = set.split(';').next().expect("name=value");
    assert!(pair.starts_with(&format!("{}=", lang.cookie())), "{set}");
    pair.to_string()
}

fn auth_register_login_me_logout(lang: Lang) {
    let s = Server::start(&example_file("auth", lang.ext()), &[]);
    assert_eq!(s.get("/health").json(), json!({"status": "ok"}));

    let ann = json!({"email": "ann@example.com", "password": "correct horse", "name": "Ann"});
    let r = post_json(&s, "/register", ann.clone(), &[]);
    assert_eq!(r.status, 201);
    assert_eq!(
        r.json(),
        json!({"id": 1, "email": "ann@example.com", "name": "Ann"})
    );
    let r = post_json(&s, "/register", ann.clone(), &[]);
    assert_eq!(r.status, 409);
    assert_eq!(r.json(), json!({"error": "email already registered"}));
    let short = json!({"email": "bob@example.com", "password": "short", "name": "Bob"});
    let r = post_json(&s, "/register", short, &[]);
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["errors"]["password"],
        "must be at least 8 characters"
    );

    let r = s.get("/me");
    assert_eq!(r.status, 401);
    assert_eq!(r.json(), json!({"error": "authentication required"}));
    let wrong = json!({"email": "ann@example.com", "password": "wrong password"});
    let r = post_json(&s, "/login", wrong, &[]);
    assert_eq!(r.status, 401);
    assert_eq!(r.json(), json!({"error": "invalid credentials"}));
    assert!(r.header("set-cookie").is_none());

    let r = post_json(&s, "/login", ann, &[]);
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        json!({"id": 1, "email": "ann@example.com", "name": "Ann"})
    );
    let set = r.header("set-cookie").expect("Set-Cookie");
    let (pair, attrs) = set.split_once("; ").expect("attributes");
    let (name, id) = pair.split_once('=').expect("name=value");
    assert_eq!(name, lang.cookie());
    assert!(
        id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{set}"
    );
    assert_eq!(attrs, "Path=/; HttpOnly; Secure; SameSite=Lax");

    // The cookie works on fresh connections, whichever worker answers.
    for _ in 0..8 {
        let r = s.request("GET", "/me", &[("Cookie", pair)], None);
        assert_eq!(r.status, 200, "{}", r.text());
        let me = r.json();
        assert_eq!(
            (me["email"].as_str(), me["name"].as_str()),
            (Some("ann@example.com"), Some("Ann"))
        );
        assert!(me["created_at"].as_i64().unwrap() > 1_600_000_000, "{me}");
    }

    let r = s.request("POST", "/logout", &[("Cookie", pair)], None);
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({"ok": true}));
    let cleared = r.header("set-cookie").expect("logout clears the cookie");
    assert!(
        cleared.starts_with(&format!("{}=;", lang.cookie())),
        "{cleared}"
    );
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    for _ in 0..4 {
        let r = s.request("GET", "/me", &[("Cookie", pair)], None);
        assert_eq!(r.status, 401, "the session is gone on every worker");
    }
    let r = s.request("POST", "/logout", &[("Cookie", pair)], None);
    assert_eq!(r.status, 401);
}

fn crud_tasks_belong_to_their_user(lang: Lang) {
    let s = Server::start(&example_file("crud_with_auth", lang.ext()), &[]);
    let r = s.get("/tasks");
    assert_eq!(r.status, 401);
    assert_eq!(r.json(), json!({"error": "authentication required"}));
    assert_eq!(
        post_json(&s, "/tasks", json!({"title": "x"}), &[]).status,
        401
    );

    let alice = sign_up(&s, lang, "alice@example.com", "Alice");
    let bob = sign_up(&s, lang, "bob@example.com", "Bob");
    let as_alice = [("Cookie", alice.as_str())];
    let as_bob = [("Cookie", bob.as_str())];

    let r = post_json(&s, "/tasks", json!({"title": "Buy milk"}), &as_alice);
    assert_eq!(r.status, 201);
    assert_eq!(r.json(), json!({"id": 1, "title": "Buy milk", "done": 0}));
    let r = post_json(&s, "/tasks", json!({}), &as_alice);
    assert_eq!(r.status, 400);
    assert_eq!(r.json(), json!({"errors": {"title": "is required"}}));

    let list = s.request("GET", "/tasks", &as_alice, None).json();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list[0]["title"], "Buy milk");

    // Bob sees nothing of Alice's and cannot change it.
    assert_eq!(s.request("GET", "/tasks", &as_bob, None).text(), "[]");
    for method in ["GET", "DELETE"] {
        let r = s.request(method, "/tasks/1", &as_bob, None);
        assert_eq!(r.status, 404, "{method}");
        assert_eq!(r.json(), json!({"error": "task not found"}));
    }
    let body = json!({"title": "mine now"}).to_string();
    let r = s.request("PUT", "/tasks/1", &as_bob, Some(body.as_bytes()));
    assert_eq!(r.status, 404);

    let body = json!({"done": true}).to_string();
    let r = s.request("PUT", "/tasks/1", &as_alice, Some(body.as_bytes()));
    assert_eq!(r.json(), json!({"ok": true}));
    let task = s.request("GET", "/tasks/1", &as_alice, None).json();
    assert_eq!(
        (task["title"].as_str(), task["done"].as_i64()),
        (Some("Buy milk"), Some(1))
    );

    let r = s.request("DELETE", "/tasks/1", &as_alice, None);
    assert_eq!(r.json(), json!({"ok": true}));
    assert_eq!(s.request("DELETE", "/tasks/1", &as_alice, None).status, 404);
}

fn middleware_request_ids_cors_and_counter(lang: Lang) {
    let s = Server::start(&example_file("middleware", lang.ext()), &[]);
    let mut sent = 0;
    let mut send = |method: &str, path: &str, headers: &[(&str, &str)], body: Option<&[u8]>| {
        sent += 1;
        s.request(method, path, headers, body)
    };

    let r = send("GET", "/health", &[], None);
    assert_eq!(r.json(), json!({"status": "ok"}));
    assert!(
        r.header("x-request-id").is_none(),
        "the logger skips /health"
    );

    // Every request gets an id of its own, on whichever worker.
    let mut ids = BTreeSet::new();
    for _ in 0..20 {
        let r = send("GET", "/", &[], None);
        let id = r.header("x-request-id").expect("X-Request-ID").to_string();
        assert_eq!(
            r.json(),
            json!({"message": "Middleware example", "request_id": id})
        );
        ids.insert(id);
    }
    assert_eq!(ids.len(), 20, "an id was handed out twice");

    let r = send("GET", "/api/items", &[], None);
    assert_eq!(r.json()["items"], json!(["apple", "banana", "cherry"]));
    assert_eq!(r.header("x-ratelimit-limit"), Some("60"));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("59"));
    assert!(r.header("x-ratelimit-reset").is_some());

    // A preflight from an allowed origin is answered by the CORS middleware.
    let origin = [
        ("Origin", "http://localhost:5173"),
        ("Access-Control-Request-Method", "POST"),
    ];
    let r = send("OPTIONS", "/api/items", &origin, None);
    assert_eq!(r.status, 204);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://localhost:5173")
    );
    assert_eq!(
        r.header("access-control-allow-methods"),
        Some("GET, POST, PUT, DELETE, OPTIONS")
    );
    assert_eq!(
        r.header("access-control-allow-headers"),
        Some("Content-Type, Authorization")
    );
    assert_eq!(r.header("access-control-max-age"), Some("86400"));
    assert_eq!(r.header("vary"), Some("Origin"));
    // Any other origin: no CORS headers; the app's OPTIONS route answers.
    let r = send(
        "OPTIONS",
        "/api/items",
        &[("Origin", "http://evil.example")],
        None,
    );
    assert_eq!(r.status, 204);
    assert!(r.header("access-control-allow-origin").is_none());
    let r = send(
        "GET",
        "/api/items",
        &[("Origin", "http://evil.example")],
        None,
    );
    assert!(r.header("access-control-allow-origin").is_none());

    let r = send("POST", "/api/items", &[], Some(br#"{"name": "date"}"#));
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["created"], json!({"name": "date"}));
    let r = send("POST", "/api/items", &[], Some(b"not json"));
    assert_eq!(
        (r.status, r.json()),
        (400, json!({"error": "invalid JSON"}))
    );

    // One count for the server, though two VMs answered.
    let r = send("GET", "/api/debug", &[], None);
    let debug = r.json();
    assert_eq!(debug["request_id"], r.header("x-request-id").expect("id"));
    assert_eq!(debug["total_requests"], json!(sent));
}

/// Wait, if needed, so that a few seconds of requests stay in one
/// 60-second window (windows start on the minute).
fn start_of_a_fresh_window() {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock");
    let into = now.as_secs() % 60;
    if into > 45 {
        std::thread::sleep(Duration::from_secs(61 - into));
    }
}

fn middleware_rate_limit_is_one_for_all_workers(lang: Lang) {
    let s = Server::start(&example_file("middleware", lang.ext()), &[]);
    start_of_a_fresh_window();
    let mut remaining = BTreeSet::new();
    for _ in 0..60 {
        let r = s.get("/api/items");
        assert_eq!(r.status, 200, "{}", s.log());
        let left = r.header("x-ratelimit-remaining").expect("remaining");
        remaining.insert(left.parse::<u32>().expect("a number"));
    }
    assert_eq!(remaining, (0..60).collect::<BTreeSet<_>>(), "one count");

    let origin = [("Origin", "http://localhost:3001")];
    let r = s.request("GET", "/api/items", &origin, None);
    assert_eq!(r.status, 429);
    let body = r.json();
    assert_eq!(body["error"], "rate limit exceeded");
    let retry = body["retry_after"].as_u64().expect("retry_after");
    assert!((1..=60).contains(&retry), "{body}");
    assert_eq!(r.header("retry-after"), Some(retry.to_string().as_str()));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("0"));
    // CORS runs first, so the page can read the 429.
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://localhost:3001")
    );
    // Preflights are answered before the limit.
    assert_eq!(
        s.request("OPTIONS", "/api/items", &origin, None).status,
        204
    );
    // Routes outside /api/* are not limited.
    assert_eq!(s.get("/").status, 200);
}
