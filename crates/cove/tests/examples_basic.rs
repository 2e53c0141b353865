//! examples/jwt_api, bench_db and bench_template end to end, each check
//! against app.lua and app.js (`both!`), over real HTTP with a real SQLite
//! file and two workers. JWT signatures are checked against an independent
//! HS256 (the hmac/sha2 crates), so both runtimes are shown to produce
//! standard tokens.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::util::{both, example_file, Lang, Response, Server};

both!(
    jwt_api_register_login_me_refresh,
    jwt_api_refuses_bad_tokens,
    jwt_api_accepts_tokens_from_other_libraries,
    jwt_api_warns_without_a_secret,
    stdlib_jwt_matches_an_independent_hs256,
    bench_db_routes,
    bench_template_pages,
);

const SECRET: &str = "examples-basic-secret";

/// An HS256 token over `header` and `claims` JSON, made without Cove.
fn reference_token(header: &str, claims: &str, secret: &str) -> String {
    let input = format!("{}.{}", B64.encode(header), B64.encode(claims));
    format!("{input}.{}", B64.encode(mac(&input, secret)))
}

fn mac(input: &str, secret: &str) -> Vec<u8> {
    let mut m = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    m.update(input.as_bytes());
    m.finalize().into_bytes().to_vec()
}

/// The claims of a token whose signature checks out with `secret`.
fn verified_claims(token: &str, secret: &str) -> Value {
    let (input, sig) = token.rsplit_once('.').expect("three segments");
    assert_eq!(
        B64.decode(sig).expect("base64url signature"),
        mac(input, secret),
        "signature of {token}"
    );
    let payload = input.split('.').nth(1).expect("payload segment");
    serde_json::from_slice(&B64.decode(payload).expect("base64url payload")).expect("JSON")
}

fn jwt_api(lang: Lang) -> Server {
    Server::start_with_env(
        &example_file("jwt_api", lang.ext()),
        &[],
        &[("JWT_SECRET", SECRET)],
    )
}

fn post_json(s: &Server, path: &str, body: Value) -> Response {
    s.post(path, &body.to_string())
}

fn bearer(s: &Server, method: &str, path: &str, token: &str) -> Response {
    let auth = format!("Bearer {token}");
    s.request(method, path, &[("Authorization", &auth)], None)
}

/// Register Ann and log her in; returns the token.
fn register_and_login(s: &Server) -> String {
    let ann = json!({"email": "ann@example.com", "password": "correct horse", "name": "Ann"});
    let r = post_json(s, "/register", ann.clone());
    assert_eq!(r.status, 201, "{}", r.text());
    let r = post_json(
        s,
        "/login",
        json!({"email": "ann@example.com", "password": "correct horse"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["token"].as_str().expect("token").to_string()
}

fn jwt_api_register_login_me_refresh(lang: Lang) {
    let s = jwt_api(lang);
    assert_eq!(s.get("/health").json(), json!({"status": "ok"}));
    let ann = json!({"email": "ann@example.com", "password": "correct horse", "name": "Ann"});
    let r = post_json(&s, "/register", ann.clone());
    assert_eq!(r.status, 201);
    assert_eq!(
        r.json(),
        json!({"id": 1, "email": "ann@example.com", "name": "Ann"})
    );
    let r = post_json(&s, "/register", ann);
    assert_eq!(
        (r.status, r.json()),
        (409, json!({"error": "email already registered"}))
    );
    let r = post_json(&s, "/register", json!({"email": "x", "password": "short"}));
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["errors"],
        json!({"email": "is not a valid email", "password": "must be at least 8 characters", "name": "is required"})
    );

    let wrong = json!({"email": "ann@example.com", "password": "wrong horse"});
    let r = post_json(&s, "/login", wrong);
    assert_eq!(
        (r.status, r.json()),
        (401, json!({"error": "invalid credentials"}))
    );
    let r = post_json(
        &s,
        "/login",
        json!({"email": "ann@example.com", "password": "correct horse"}),
    );
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(
        v["user"],
        json!({"id": 1, "email": "ann@example.com", "name": "Ann"})
    );
    let token = v["token"].as_str().expect("token");
    // Signed with JWT_SECRET from the environment, as standard HS256.
    let claims = verified_claims(token, SECRET);
    assert_eq!(
        (claims["sub"].as_i64(), claims["email"].as_str()),
        (Some(1), Some("ann@example.com"))
    );
    let (iat, exp) = (
        claims["iat"].as_i64().unwrap(),
        claims["exp"].as_i64().unwrap(),
    );
    assert_eq!(exp - iat, 3600, "{claims}");

    let r = bearer(&s, "GET", "/me", token);
    assert_eq!(r.status, 200, "{}", r.text());
    let me = r.json();
    assert_eq!(
        (me["id"].as_i64(), me["email"].as_str(), me["name"].as_str()),
        (Some(1), Some("ann@example.com"), Some("Ann"))
    );
    assert!(me["created_at"].as_i64().unwrap() > 1_600_000_000);

    let r = bearer(&s, "POST", "/refresh", token);
    assert_eq!(r.status, 200);
    let fresh = r.json()["token"].as_str().expect("token").to_string();
    assert_eq!(verified_claims(&fresh, SECRET)["sub"], 1);
    assert_eq!(bearer(&s, "GET", "/me", &fresh).json()["id"], 1);
    // "bearer" in any case, as Hull's pattern allows.
    let auth = format!("bearer {fresh}");
    assert_eq!(
        s.request("GET", "/me", &[("Authorization", &auth)], None)
            .status,
        200
    );
}

fn jwt_api_refuses_bad_tokens(lang: Lang) {
    let s = jwt_api(lang);
    let token = register_and_login(&s);
    let unauthorized = json!({"error": "authentication required"});
    let r = s.get("/me");
    assert_eq!((r.status, r.json()), (401, unauthorized.clone()));
    assert_eq!(s.request("POST", "/refresh", &[], None).status, 401);

    // Another user's id in the payload, the original signature.
    let parts: Vec<&str> = token.split('.').collect();
    let forged_claims = B64.encode(r#"{"email":"ann@example.com","exp":4000000000,"sub":2}"#);
    let forged = format!("{}.{forged_claims}.{}", parts[0], parts[2]);
    let header = r#"{"alg":"HS256","typ":"JWT"}"#;
    let cases = [
        ("tampered payload", forged),
        ("tampered signature", format!("{token}x")),
        (
            "another secret",
            reference_token(header, r#"{"sub":1,"exp":4000000000}"#, "not-the-secret"),
        ),
        (
            "expired",
            reference_token(header, r#"{"sub":1,"exp":1000000000}"#, SECRET),
        ),
        (
            "alg none",
            format!(
                "{}.{}.",
                B64.encode(r#"{"alg":"none"}"#),
                B64.encode(r#"{"sub":1}"#)
            ),
        ),
        ("two segments", "abc.def".to_string()),
    ];
    for (what, bad) in cases {
        let r = bearer(&s, "GET", "/me", &bad);
        assert_eq!((r.status, r.json()), (401, unauthorized.clone()), "{what}");
    }
    // The real one still works.
    assert_eq!(bearer(&s, "GET", "/me", &token).status, 200);
}

/// Tokens made elsewhere (another library's header order, or the other
/// runtime) are accepted: the format is the standard one.
fn jwt_api_accepts_tokens_from_other_libraries(lang: Lang) {
    let s = jwt_api(lang);
    register_and_login(&s);
    let external = reference_token(
        r#"{"typ":"JWT","alg":"HS256"}"#,
        r#"{"sub":1,"email":"ann@example.com","exp":4000000000}"#,
        SECRET,
    );
    let r = bearer(&s, "GET", "/me", &external);
    assert_eq!((r.status, r.json()["id"].as_i64()), (200, Some(1)));

    let other = match lang {
        Lang::Lua => Lang::Js,
        Lang::Js => Lang::Lua,
    };
    let t = jwt_api(other);
    let token = register_and_login(&t);
    let r = bearer(&s, "GET", "/me", &token);
    assert_eq!(
        (r.status, r.json()["email"].as_str()),
        (200, Some("ann@example.com")),
        "a token from app.{} on app.{}",
        other.ext(),
        lang.ext()
    );
}

/// Hull silently signed with its fallback secret; Cove says so in the log.
fn jwt_api_warns_without_a_secret(lang: Lang) {
    let s = Server::start_with_env(
        &example_file("jwt_api", lang.ext()),
        &["--workers", "1"],
        &[("JWT_SECRET", "")],
    );
    s.wait_for_log("JWT_SECRET is not set");
    let token = register_and_login(&s);
    verified_claims(&token, "change-me-in-production");
    let quiet = jwt_api(lang);
    assert!(
        !quiet.log().contains("JWT_SECRET is not set"),
        "{}",
        quiet.log()
    );
}

/// conformance/stdlib signs a fixed payload; the token must equal one made
/// independently, and its MAC must have bytes ≥ 0x80 (where Hull's JS went
/// wrong by re-encoding them as UTF-8 text).
fn stdlib_jwt_matches_an_independent_hs256(lang: Lang) {
    let app = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/stdlib")
        .join(format!("app.{}", lang.ext()));
    let s = Server::start(&app, &[]);
    let token = s.get("/jwt/sign-fixed").json()["token"]
        .as_str()
        .expect("token")
        .to_string();
    let claims = r#"{"exp":4000000000,"iat":1700000000,"name":"José","sub":"42"}"#;
    let expected = reference_token(
        r#"{"alg":"HS256","typ":"JWT"}"#,
        claims,
        "conformance-secret",
    );
    assert_eq!(token, expected);
    let sig = B64.decode(token.rsplit('.').next().unwrap()).unwrap();
    assert!(
        sig.iter().any(|b| *b >= 0x80),
        "the vector must cover high bytes"
    );
}

fn bench_db_routes(lang: Lang) {
    let s = Server::start(&example_file("bench_db", lang.ext()), &[]);
    assert_eq!(s.get("/health").json(), json!({"status": "ok"}));
    let rows = s.get("/read").json();
    let rows = rows.as_array().expect("array");
    assert_eq!(rows.len(), 20);
    assert_eq!(rows[0]["id"], 1000, "newest seed first");
    assert_eq!(rows[19]["id"], 981);
    assert_eq!(rows[0]["kind"], "seed");
    assert_eq!(rows[0]["payload"], r#"{"n":1000}"#);

    assert_eq!(s.post("/write", "").json(), json!({"inserted": 1}));
    assert_eq!(s.get("/read").json()[0]["kind"], "write");
    assert_eq!(s.post("/write-batch", "").json(), json!({"inserted": 10}));
    let mixed = s.get("/mixed").json();
    assert_eq!(mixed.as_array().map(Vec::len), Some(20));
    assert_eq!(mixed[0]["kind"], "mixed");

    // Each acknowledged write is in the file; two workers seeded once.
    let db = rusqlite::Connection::open(s.db_path()).expect("open db");
    let count = |kind: &str| -> i64 {
        db.query_row("SELECT COUNT(*) FROM events WHERE kind = ?", [kind], |r| {
            r.get(0)
        })
        .expect("count")
    };
    assert_eq!(
        (
            count("seed"),
            count("write"),
            count("batch"),
            count("mixed")
        ),
        (1000, 1, 10, 1)
    );
}

fn bench_template_pages(lang: Lang) {
    let s = Server::start(&example_file("bench_template", lang.ext()), &[]);
    assert_eq!(s.get("/health").json(), json!({"status": "ok"}));
    let page = |path: &str| {
        let r = s.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        r.text()
    };
    let simple = page("/simple");
    assert!(simple.contains("<title>Simple</title>"), "{simple}");
    assert!(simple.contains("<p>Hello from Cove!</p>"), "{simple}");

    let list = page("/loop");
    assert_eq!(list.matches("<li>").count(), 50, "{list}");
    assert_eq!(list.matches(" (active)</li>").count(), 34, "{list}");
    assert!(list.contains("<li>50. Item 50 (active)</li>"), "{list}");

    let full = page("/full");
    for part in [
        "<title>Full · Bench</title>",
        "<header><h1>Full</h1></header>",
        "<p>Layout, partial, loop, filter, conditions.</p>",
        "<li class=\"active\">ITEM 1</li>",
        "<li>Item 3</li>",
        "<footer>© 20",
    ] {
        assert!(full.contains(part), "{part} in {full}");
    }
    assert_eq!(full.matches("<li class=\"active\">").count(), 34);
}

/// Both versions of bench_template render byte-identical pages.
#[test]
fn bench_template_is_the_same_in_both_runtimes() {
    let lua = Server::start(&example_file("bench_template", "lua"), &[]);
    let js = Server::start(&example_file("bench_template", "js"), &[]);
    for path in ["/simple", "/loop", "/full"] {
        assert_eq!(lua.get(path).text(), js.get(path).text(), "{path}");
    }
}
