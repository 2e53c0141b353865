//! examples/todo end to end, in both versions of the app: the real server
//! with two workers and a SQLite file, driven like a browser would (form
//! posts, the CSRF token read from each page, cookies kept in a jar and
//! sent on a fresh connection every time, so requests land on both
//! workers).

use std::collections::BTreeMap;

use rusqlite::types::Value;

use crate::util::{bin, both, example_file, Lang, Response, Server};

fn todo(ext: &str, env: &[(&str, &str)]) -> Server {
    Server::start_with_env(&example_file("todo", ext), &["--workers", "2"], env)
}

both!(
    sign_up_log_out_and_in,
    todos_add_toggle_delete,
    csrf_tokens_are_required,
    csrf_secret_is_shared_by_workers,
    a_csrf_secret_too_long_for_hmac_stops_the_start,
    rate_limits_answer_429,
    language_switch,
    static_css_is_served_with_an_etag,
);

/// A browser without a browser: a cookie jar, form posts, a fresh
/// connection per request.
struct Visitor<'a> {
    server: &'a Server,
    cookies: BTreeMap<String, String>,
}

impl<'a> Visitor<'a> {
    fn new(server: &'a Server) -> Self {
        Visitor {
            server,
            cookies: BTreeMap::new(),
        }
    }

    fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Response {
        let jar = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let mut all: Vec<(&str, &str)> = headers.to_vec();
        if !jar.is_empty() {
            all.push(("Cookie", &jar));
        }
        if body.is_some() {
            all.push(("Content-Type", "application/x-www-form-urlencoded"));
        }
        let r = self
            .server
            .request(method, path, &all, body.map(str::as_bytes));
        for set in r.header_all("set-cookie") {
            let pair = set.split(';').next().unwrap_or_default();
            let (name, value) = pair.split_once('=').expect("name=value");
            if value.is_empty() || set.contains("Max-Age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_string(), value.to_string());
            }
        }
        r
    }

    fn get(&mut self, path: &str) -> Response {
        self.send("GET", path, &[], None)
    }

    fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Response {
        self.send("POST", path, &[], Some(&form(fields)))
    }

    /// GET `page`, then post `fields` to `action` with the page's CSRF token.
    fn submit(&mut self, page: &str, action: &str, fields: &[(&str, &str)]) -> Response {
        let token = csrf_token(&self.get(page));
        let mut all = vec![("_csrf", token.as_str())];
        all.extend_from_slice(fields);
        self.post(action, &all)
    }

    fn register(&mut self, name: &str, email: &str, password: &str) -> Response {
        let fields = [("name", name), ("email", email), ("password", password)];
        self.submit("/register", "/register", &fields)
    }
}

/// `application/x-www-form-urlencoded`, as a browser encodes a form.
fn form(fields: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                    (b as char).to_string()
                }
                b' ' => "+".to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The value of the page's first hidden `_csrf` field (it must have one).
fn csrf_token(page: &Response) -> String {
    let html = page.text();
    let start = html
        .find(r#"name="_csrf" value=""#)
        .unwrap_or_else(|| panic!("no _csrf field in:\n{html}"))
        + r#"name="_csrf" value=""#.len();
    let token = &html[start..start + html[start..].find('"').expect("closing quote")];
    assert!(!token.is_empty(), "empty CSRF token in:\n{html}");
    token.to_string()
}

fn assert_redirect(r: &Response, to: &str) {
    assert_eq!(r.status, 302, "expected a redirect to {to}: {}", r.text());
    assert_eq!(r.header("location"), Some(to));
}

fn assert_has(r: &Response, text: &str) {
    let body = r.text();
    assert!(body.contains(text), "{text:?} not in:\n{body}");
}

/// A form post without cookies: what another site's page can make a
/// browser send (SameSite=Lax keeps the cookies home).
fn post_from_elsewhere(server: &Server, path: &str, fields: &[(&str, &str)]) -> Response {
    let body = form(fields);
    let headers = [("Content-Type", "application/x-www-form-urlencoded")];
    server.request("POST", path, &headers, Some(body.as_bytes()))
}

/// The rows of `sql` on the server's database file.
fn rows(server: &Server, sql: &str) -> Vec<Vec<Value>> {
    let db = rusqlite::Connection::open(server.db_path()).expect("open the app's database");
    let mut stmt = db.prepare(sql).expect("prepare");
    let n = stmt.column_count();
    stmt.query_map([], |row| (0..n).map(|i| row.get::<_, Value>(i)).collect())
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

/// The single integer `sql` selects.
fn count(server: &Server, sql: &str) -> i64 {
    match rows(server, sql).as_slice() {
        [row] => match row.as_slice() {
            [Value::Integer(n)] => *n,
            other => panic!("{sql}: {other:?}"),
        },
        other => panic!("{sql}: {other:?}"),
    }
}

fn session_cookie(ext: &str) -> &'static str {
    // Hull's names, kept: the Lua and JS auth modules differ.
    if ext == "lua" {
        "hull_session"
    } else {
        "hull.sid"
    }
}

fn sign_up_log_out_and_in(lang: Lang) {
    let ext = lang.ext();
    let s = todo(ext, &[]);
    let health = s.get("/health");
    assert_eq!(
        (health.status, health.json()),
        (200, serde_json::json!({"status": "ok"}))
    );
    let mut v = Visitor::new(&s);
    assert_redirect(&v.get("/"), "/login");

    // The login page starts a visitor session so that its form has a token.
    let page = v.get("/login");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(page.header("content-security-policy").is_some());
    assert!(page.header("x-request-id").is_some(), "logger middleware");
    let set = page.header("set-cookie").expect("a visitor session");
    assert!(
        set.starts_with(&format!("{}=", session_cookie(ext))),
        "{set}"
    );
    // Secure by default (COOKIE_SECURE unset).
    for attr in ["Path=/", "HttpOnly", "Secure", "SameSite=Lax"] {
        assert!(set.contains(attr), "{attr} in {set}");
    }
    let visitor_sid = v.cookies[session_cookie(ext)].clone();

    // Sign up: a new session id (the visitor's is ended), then the list.
    let r = v.register("Ada Lovelace", "Ada@Example.com", "correct horse");
    assert_redirect(&r, "/");
    let sid = v.cookies[session_cookie(ext)].clone();
    assert_ne!(sid, visitor_sid);
    let home = v.get("/");
    assert_eq!(home.status, 200);
    assert_has(&home, "<h1>What needs doing?</h1>");
    assert_has(&home, r#"<span class="who">Ada Lovelace</span>"#);
    assert_has(&home, "Nothing to do yet.");
    assert_redirect(&v.get("/login"), "/");
    assert_redirect(&v.get("/register"), "/");
    // The address is stored lower-case, the password only as a hash.
    let users = rows(&s, "SELECT email, substr(password_hash, 1, 14) FROM users");
    let text = |s: &str| Value::Text(s.to_string());
    assert_eq!(users, [[text("ada@example.com"), text("pbkdf2:100000:")]]);

    // The session cookie works on fresh connections, whichever worker answers.
    for _ in 0..8 {
        assert_eq!(v.get("/").status, 200);
    }

    // Log out: the cookie is cleared and the old session id is dead.
    let r = v.submit("/", "/logout", &[]);
    assert_redirect(&r, "/login");
    assert!(!v.cookies.contains_key(session_cookie(ext)));
    assert_redirect(&v.get("/"), "/login");
    let mut replay = Visitor::new(&s);
    replay.cookies.insert(session_cookie(ext).into(), sid);
    assert_redirect(&replay.get("/"), "/login");

    // Log in: errors re-render the form (200), then success redirects.
    let r = v.submit(
        "/login",
        "/login",
        &[("email", "ada@example.com"), ("password", "wrong horse")],
    );
    assert_eq!(r.status, 200);
    assert_has(&r, "Invalid credentials");
    assert_has(&r, r#"value="ada@example.com""#);
    let r = v.submit(
        "/login",
        "/login",
        &[("email", "not an address"), ("password", "")],
    );
    assert_eq!(r.status, 200);
    assert_has(&r, "Please enter a valid email address.");
    let r = v.submit(
        "/login",
        "/login",
        &[("email", "ADA@example.com"), ("password", "correct horse")],
    );
    assert_redirect(&r, "/");
    assert_has(&v.get("/"), "Ada Lovelace");

    // Sign-up errors: each field's message, and a taken address.
    let mut other = Visitor::new(&s);
    let r = other.register("", "nope", "short");
    assert_eq!(r.status, 200);
    assert_has(&r, "Please enter your name.");
    assert_has(&r, "Please enter a valid email address.");
    assert_has(&r, "at least 8 characters");
    let r = other.register("Ada Again", "ada@example.com", "another password");
    assert_eq!(r.status, 200);
    assert_has(&r, "Email already registered.");
    assert_has(&r, r#"value="Ada Again""#);
    assert_eq!(count(&s, "SELECT count(*) FROM users"), 1);
}

fn todos_add_toggle_delete(lang: Lang) {
    let ext = lang.ext();
    let s = todo(ext, &[]);
    let mut v = Visitor::new(&s);
    assert_redirect(&v.register("Grace", "grace@example.com", "compiler1"), "/");

    for title in ["Buy milk", "  <b>Fix</b> the \"bug\" & ship  ", "   "] {
        assert_redirect(&v.submit("/", "/add", &[("title", title)]), "/");
    }
    let home = v.get("/");
    // Newest first; trimmed; escaped; the blank title was skipped.
    let fix = home
        .text()
        .find("&lt;b&gt;Fix&lt;/b&gt; the &quot;bug&quot; &amp; ship")
        .expect("escaped title");
    let milk = home.text().find(">Buy milk<").expect("first todo");
    assert!(fix < milk, "newest first");
    assert_has(&home, "2 of 2 left");
    assert_eq!(count(&s, "SELECT count(*) FROM todos"), 2);
    let milk_id = count(&s, "SELECT min(id) FROM todos");

    // Toggle on, then off again.
    assert_redirect(&v.submit("/", &format!("/toggle/{milk_id}"), &[]), "/");
    let home = v.get("/");
    assert_has(
        &home,
        &format!(r#"<li class="todo done" id="todo-{milk_id}">"#),
    );
    assert_has(&home, "1 of 2 left");
    assert_has(&home, r#"<progress value="1" max="2""#);
    assert_redirect(&v.submit("/", &format!("/toggle/{milk_id}"), &[]), "/");
    assert_has(
        &v.get("/"),
        &format!(r#"<li class="todo" id="todo-{milk_id}">"#),
    );

    // Titles are cut at 500 characters, not bytes.
    let long = "ő".repeat(600);
    assert_redirect(&v.submit("/", "/add", &[("title", &long)]), "/");
    let stored = rows(
        &s,
        "SELECT length(title), length(CAST(title AS BLOB)) FROM todos ORDER BY id DESC LIMIT 1",
    );
    assert_eq!(stored, [[Value::Integer(500), Value::Integer(1000)]]);

    // Somebody else can neither see nor change these todos.
    let mut mallory = Visitor::new(&s);
    assert_redirect(
        &mallory.register("Mallory", "m@example.com", "password1"),
        "/",
    );
    assert!(!mallory.get("/").text().contains("Buy milk"));
    assert_redirect(
        &mallory.submit("/", &format!("/toggle/{milk_id}"), &[]),
        "/",
    );
    assert_redirect(
        &mallory.submit("/", &format!("/delete/{milk_id}"), &[]),
        "/",
    );
    assert_eq!(
        count(&s, &format!("SELECT done FROM todos WHERE id = {milk_id}")),
        0
    );

    // Delete; all done.
    assert_redirect(&v.submit("/", &format!("/delete/{milk_id}"), &[]), "/");
    let home = v.get("/");
    assert!(!home.text().contains("Buy milk"));
    for row in rows(&s, "SELECT id FROM todos") {
        let Value::Integer(id) = row[0] else {
            panic!("{row:?}")
        };
        assert_redirect(&v.submit("/", &format!("/toggle/{id}"), &[]), "/");
    }
    assert_has(&v.get("/"), "All 2 done. Nice work!");

    // Without a session every todo route goes to /login.
    for path in ["/add", "/toggle/1", "/delete/1"] {
        assert_redirect(&post_from_elsewhere(&s, path, &[("title", "x")]), "/login");
    }
}

fn csrf_tokens_are_required(lang: Lang) {
    let ext = lang.ext();
    let s = todo(ext, &[]);
    let mut v = Visitor::new(&s);
    assert_redirect(&v.register("Alan", "alan@example.com", "enigma123"), "/");
    let (missing, invalid) = if ext == "lua" {
        (
            r#"{"error":"csrf: invalid token"}"#,
            r#"{"error":"csrf: invalid token"}"#,
        )
    } else {
        (
            r#"{"error":"CSRF token missing"}"#,
            r#"{"error":"CSRF token invalid"}"#,
        )
    };
    let r = v.post("/add", &[("title", "no token")]);
    assert_eq!((r.status, r.text().as_str()), (403, missing));
    let r = v.post("/add", &[("title", "bad token"), ("_csrf", "1234.abcd")]);
    assert_eq!((r.status, r.text().as_str()), (403, invalid));
    // A token of another session does not fit this one.
    let mut other = Visitor::new(&s);
    let foreign = csrf_token(&other.get("/login"));
    let r = v.post("/add", &[("title", "foreign"), ("_csrf", &foreign)]);
    assert_eq!((r.status, r.text().as_str()), (403, invalid));
    let r = v.post("/logout", &[]);
    assert_eq!(r.status, 403, "logout needs a token too");
    assert_eq!(count(&s, "SELECT count(*) FROM todos"), 0);
    // The header works as well as the field.
    let token = csrf_token(&v.get("/"));
    let body = form(&[("title", "by header")]);
    let r = v.send("POST", "/add", &[("X-CSRF-Token", &token)], Some(&body));
    assert_redirect(&r, "/");

    // A log-in form posted without the visitor session (as from another
    // site: SameSite=Lax cookies are not sent) logs nobody in.
    let r = post_from_elsewhere(
        &s,
        "/login",
        &[("email", "alan@example.com"), ("password", "enigma123")],
    );
    assert_eq!(r.status, 200);
    assert_has(&r, "This form had expired. Please send it again.");
    let set = r.header("set-cookie").expect("a new visitor session");
    let mut forged = Visitor::new(&s);
    let (name, value) = set
        .split(';')
        .next()
        .and_then(|p| p.split_once('='))
        .expect("name=value");
    forged.cookies.insert(name.into(), value.into());
    assert_redirect(&forged.get("/"), "/login");
    let fields = [
        ("name", "Eve"),
        ("email", "eve@example.com"),
        ("password", "password1"),
    ];
    assert_eq!(post_from_elsewhere(&s, "/register", &fields).status, 200);
    assert_eq!(count(&s, "SELECT count(*) FROM users"), 1);
}

fn csrf_secret_is_shared_by_workers(lang: Lang) {
    let ext = lang.ext();
    // Without CSRF_SECRET: one secret, made by whichever worker loaded
    // first, kept in the database. Tokens from one worker verify on the
    // other (a per-worker secret would fail about half of these posts).
    let s = todo(ext, &[]);
    let mut v = Visitor::new(&s);
    assert_redirect(&v.register("Edsger", "ed@example.com", "goto harmful"), "/");
    for i in 0..12 {
        let title = format!("todo {i}");
        assert_redirect(&v.submit("/", "/add", &[("title", &title)]), "/");
    }
    assert_eq!(count(&s, "SELECT length(value) FROM app_secrets"), 64);
    drop(s);

    // With CSRF_SECRET the database keeps nothing.
    let s = todo(ext, &[("CSRF_SECRET", "from the environment")]);
    let mut v = Visitor::new(&s);
    assert_redirect(
        &v.register("Barbara", "bl@example.com", "liskov substitution"),
        "/",
    );
    for _ in 0..6 {
        assert_redirect(&v.submit("/", "/add", &[("title", "x")]), "/");
    }
    assert!(rows(&s, "SELECT * FROM app_secrets").is_empty());
}

fn a_csrf_secret_too_long_for_hmac_stops_the_start(lang: Lang) {
    let ext = lang.ext();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(bin())
        .args(["-p", "0", "-d"])
        .arg(dir.path().join("data.db"))
        .arg(example_file("todo", ext))
        .env("CSRF_SECRET", "é".repeat(65))
        .output()
        .expect("run cove");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let want = format!("app.{ext}:");
    assert!(stderr.contains(&want), "{stderr}");
    assert!(
        stderr.contains("CSRF_SECRET is 130 bytes long; use at most 128"),
        "{stderr}"
    );
}

fn rate_limits_answer_429(lang: Lang) {
    let ext = lang.ext();
    let s = todo(ext, &[]);
    for (path, limit) in [("/register", "5"), ("/login", "10")] {
        // Fixed windows: if one ends mid-way the count restarts, so keep
        // posting (each on a new connection) until the limit is hit.
        let mut last = None;
        for _ in 0..40 {
            let r = post_from_elsewhere(&s, path, &[("email", "x")]);
            assert_eq!(r.header("x-ratelimit-limit"), Some(limit));
            if r.status == 429 {
                last = Some(r);
                break;
            }
            assert_eq!(r.status, 200, "{path}: {}", r.text());
        }
        let r = last.unwrap_or_else(|| panic!("{path}: never limited"));
        assert_eq!(r.header("x-ratelimit-remaining"), Some("0"));
        let reset: u64 = r
            .header("x-ratelimit-reset")
            .expect("reset")
            .parse()
            .expect("a number");
        assert!(reset > 1_700_000_000);
        assert!(r.header("retry-after").is_some());
        let body = r.json();
        assert_eq!(body["error"], "rate limit exceeded");
    }
    // Other routes are not limited.
    assert_eq!(s.get("/login").status, 200);
}

fn language_switch(lang: Lang) {
    let ext = lang.ext();
    let s = todo(ext, &[]);
    let mut v = Visitor::new(&s);
    assert_has(&v.get("/login"), r#"<html lang="en">"#);
    // Accept-Language picks Hungarian when there is no cookie.
    let r = v.send(
        "GET",
        "/login",
        &[("Accept-Language", "hu-HU,hu;q=0.9,en;q=0.5")],
        None,
    );
    assert_has(&r, r#"<html lang="hu">"#);
    assert_has(&r, "<h1>Üdv újra</h1>");

    // The switch sets the cookie and goes back to the page it was made on.
    let r = v.send(
        "GET",
        "/lang/hu",
        &[("Referer", "http://localhost/about")],
        None,
    );
    assert_redirect(&r, "/about");
    let set = r.header("set-cookie").expect("hull.lang cookie");
    assert!(set.starts_with("hull.lang=hu; Path=/"), "{set}");
    assert!(set.contains("Max-Age=31536000"), "{set}");
    let about = v.get("/about");
    assert_has(&about, "<h1>Az alkalmazásról</h1>");
    let runtime = if ext == "lua" { "Lua" } else { "JavaScript" };
    assert_has(&about, &format!("Ez a példány {runtime} nyelven fut."));
    // The cookie wins over Accept-Language.
    let r = v.send("GET", "/lang/en", &[], None);
    assert_redirect(&r, "/");
    let r = v.send("GET", "/about", &[("Accept-Language", "hu")], None);
    assert_has(&r, &format!("This copy runs on {runtime}."));
    assert_redirect(&v.get("/lang/hu"), "/");

    // Never back to another site; unknown languages set nothing.
    for referer in [
        "http://evil.example/about",
        "//evil.example/x",
        "/\\evil.example",
        "javascript:alert(1)",
    ] {
        let r = v.send("GET", "/lang/hu", &[("Referer", referer)], None);
        assert_redirect(&r, "/");
    }
    let r = v.get("/lang/xx");
    assert_redirect(&r, "/");
    assert!(r.header("set-cookie").is_none());

    // Hungarian form errors.
    let r = v.register("", "", "");
    assert_eq!(r.status, 200);
    assert_has(&r, "Add meg a neved.");
    assert_has(&r, "A jelszónak legalább 8 karakterből kell állnia.");
}

fn static_css_is_served_with_an_etag(lang: Lang) {
    let ext = lang.ext();
    let s = todo(ext, &[]);
    let css = s.get("/static/style.css");
    assert_eq!(css.status, 200);
    assert_eq!(css.header("content-type"), Some("text/css"));
    assert!(css.text().contains(".todo.done .title"));
    let etag = css.header("etag").expect("an ETag").to_string();
    let again = s.request(
        "GET",
        "/static/style.css",
        &[("If-None-Match", &etag)],
        None,
    );
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    let icon = s.get("/static/favicon.svg");
    assert_eq!(
        (icon.status, icon.header("content-type")),
        (200, Some("image/svg+xml"))
    );
    // Every page links both.
    let page = s.get("/login");
    assert_has(&page, r#"<link rel="stylesheet" href="/static/style.css">"#);
    assert_has(&page, r#"<link rel="icon" href="/static/favicon.svg""#);
}
