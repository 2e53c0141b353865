//! examples/webhooks and examples/email end to end, in both runtimes, on two
//! workers: webhooks reach a receiver started here, signed with the
//! configured secret, once per Idempotency-Key (also when the retries race);
//! the receiving side checks signatures and drops redeliveries; mail reaches
//! a local SMTP sink. `both!` turns each check into a Lua and a JS test.
//! The last checks wait for the stdlib's ttls to run out, on the
//! conformance app (conformance/reliability), where the ttls are short.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::util::servers::{closed_port, Receiver, Sink};
use crate::util::{both, example_file, Lang, Server};

both!(
    webhooks_deliver_signed_events_once_per_key,
    webhooks_idempotency_holds_when_retries_race,
    webhooks_failed_deliveries_wait_for_a_retry,
    webhooks_receive_checks_signatures_and_drops_redeliveries,
    webhooks_deliver_to_the_app_itself,
    webhooks_without_a_secret_say_so,
    email_reaches_the_smtp_server_and_is_logged,
    email_failures_are_logged,
    inbox_ids_expire_after_their_ttl,
    idempotency_keys_expire_after_their_ttl,
);

const SECRET: &str = "test-secret";

fn webhooks(lang: Lang) -> Server {
    Server::start_with_env(
        &example_file("webhooks", lang.ext()),
        &[],
        &[("WEBHOOK_SECRET", SECRET)],
    )
}

/// `sha256=<hex HMAC-SHA256 of body keyed with secret>`, computed here.
fn signature(secret: &str, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body.as_bytes());
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}

fn subscribe(s: &Server, url: &str, events: &str) {
    let r = s.post(
        "/webhooks",
        &json!({ "url": url, "events": events }).to_string(),
    );
    assert_eq!(r.status, 201, "{}", r.text());
}

fn post_event(s: &Server, key: Option<&str>, body: &str) -> crate::util::Response {
    let headers: Vec<(&str, &str)> = key.map(|k| ("Idempotency-Key", k)).into_iter().collect();
    s.request("POST", "/events", &headers, Some(body.as_bytes()))
}

fn webhooks_deliver_signed_events_once_per_key(lang: Lang) {
    let hook = Receiver::start(&[200]);
    let s = webhooks(lang);
    subscribe(&s, &hook.url("/hook"), "user.created, user.deleted");
    subscribe(&s, &hook.url("/other"), "order.paid");

    let body = r#"{"event":"user.created","data":{"id":42}}"#;
    let r = post_event(&s, Some("key-1"), body);
    assert_eq!(r.status, 200, "{}\n{}", r.text(), s.log());
    assert_eq!(r.json(), json!({ "event_id": 1, "webhooks_queued": 1 }));
    assert_eq!(r.header("x-idempotency-replay"), None);

    // Delivered before the response went out, signed with WEBHOOK_SECRET.
    let got = hook.received();
    assert_eq!(got.len(), 1, "{got:?}\n{}", s.log());
    let req = &got[0];
    assert_eq!(
        (req.method.as_str(), req.target.as_str()),
        ("POST", "/hook")
    );
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.header("x-webhook-event"), Some("user.created"));
    assert_eq!(req.header("x-webhook-event-id"), Some("1"));
    assert_eq!(
        req.header("x-webhook-signature"),
        Some(signature(SECRET, &req.body).as_str())
    );
    let payload: Value = serde_json::from_str(&req.body).expect("JSON payload");
    assert_eq!(payload["event"], "user.created");
    assert_eq!(payload["data"], json!({ "id": 42 }));
    assert!(payload["timestamp"].is_i64(), "{payload}");

    // A retry with the key: the first response again, nothing sent again.
    let again = post_event(&s, Some("key-1"), body);
    assert_eq!(again.status, 200);
    assert_eq!(again.header("x-idempotency-replay"), Some("true"));
    assert_eq!(again.header_all("content-type"), vec!["application/json"]);
    assert_eq!(again.body, r.body, "the replay is the stored body");
    assert_eq!(hook.received().len(), 1);
    assert_eq!(s.get("/events").json().as_array().map(Vec::len), Some(1));

    // The key with another body is a client bug.
    let other = post_event(&s, Some("key-1"), r#"{"event":"user.deleted"}"#);
    assert_eq!(other.status, 409);
    assert_eq!(
        other.json()["error"],
        "idempotency key already used with different request body"
    );

    // Without a key every request runs.
    assert_eq!(post_event(&s, None, body).json()["event_id"], 2);
    assert_eq!(hook.received().len(), 2);

    assert_eq!(
        s.get("/outbox/stats").json(),
        json!({ "pending": 0, "delivered": 2, "failed": 0 })
    );
    let deliveries = s.get("/webhooks/1/deliveries").json();
    let states: Vec<(&Value, &Value)> = deliveries
        .as_array()
        .expect("a list")
        .iter()
        .map(|d| (&d["state"], &d["attempts"]))
        .collect();
    assert_eq!(states, vec![(&json!("delivered"), &json!(1)); 2]);
    assert_eq!(s.get("/webhooks/2/deliveries").json(), json!([]));
    assert_eq!(s.get("/webhooks/9/deliveries").status, 404);
}

/// Clients that retry at once with one key, on two workers: one request
/// runs, the others get its response replayed or 409 while it runs.
fn webhooks_idempotency_holds_when_retries_race(lang: Lang) {
    let hook = Receiver::start(&[200]);
    let s = webhooks(lang);
    subscribe(&s, &hook.url("/hook"), "*");
    let body = r#"{"event":"race"}"#;
    let port = s.port;
    let answers: Vec<_> = (0..8)
        .map(|_| {
            thread::spawn(move || {
                let mut conn = crate::util::Conn::open(port);
                conn.request(
                    "POST",
                    "/events",
                    &[("Idempotency-Key", "same")],
                    Some(body.as_bytes()),
                )
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().expect("client thread"))
        .collect();
    let ran: Vec<_> = answers
        .iter()
        .filter(|r| r.status == 200 && r.header("x-idempotency-replay").is_none())
        .collect();
    assert_eq!(ran.len(), 1, "exactly one request runs\n{}", s.log());
    for r in &answers {
        match r.status {
            200 => assert_eq!(r.json(), json!({ "event_id": 1, "webhooks_queued": 1 })),
            409 => assert_eq!(
                r.json()["error"],
                "request with this idempotency key is already in progress"
            ),
            other => panic!("status {other}: {}\n{}", r.text(), s.log()),
        }
    }
    assert_eq!(s.get("/events").json().as_array().map(Vec::len), Some(1));
    assert_eq!(hook.received().len(), 1);
}

fn webhooks_failed_deliveries_wait_for_a_retry(lang: Lang) {
    let hook = Receiver::start(&[503]);
    let s = webhooks(lang);
    subscribe(&s, &hook.url("/busy"), "*");
    subscribe(&s, &format!("http://127.0.0.1:{}/gone", closed_port()), "*");
    let r = post_event(&s, None, r#"{"event":"ping"}"#);
    assert_eq!(r.json(), json!({ "event_id": 1, "webhooks_queued": 2 }));
    assert_eq!(hook.received().len(), 1);
    assert_eq!(
        s.get("/outbox/stats").json(),
        json!({ "pending": 2, "delivered": 0, "failed": 0 })
    );
    let busy = &s.get("/webhooks/1/deliveries").json()[0];
    assert_eq!(busy["last_error"], "HTTP 503: ok");
    assert_eq!(busy["attempts"], 1);
    let gone = &s.get("/webhooks/2/deliveries").json()[0];
    let error = gone["last_error"].as_str().expect("an error");
    assert!(error.starts_with("http.POST failed"), "{error}");
    // The next attempt is 20 s away: a flush now sends nothing.
    let flushed = s.post("/outbox/flush", "");
    assert_eq!(
        flushed.json(),
        json!({ "delivered": 0, "failed": 0, "retried": 0 })
    );
    assert_eq!(hook.received().len(), 1);
}

fn receive(s: &Server, body: &str, headers: &[(&str, &str)]) -> crate::util::Response {
    s.request("POST", "/webhooks/receive", headers, Some(body.as_bytes()))
}

fn webhooks_receive_checks_signatures_and_drops_redeliveries(lang: Lang) {
    let s = webhooks(lang);
    let body = r#"{"event":"invoice.paid"}"#;
    let good = signature(SECRET, body);
    // The development secret is not the configured one.
    let dev = signature("whsec_change-me-in-production", body);
    let cases: [(&[(&str, &str)], &str); 4] = [
        (&[], "missing signature"),
        (
            &[("X-Webhook-Signature", "abc")],
            "invalid signature format",
        ),
        (
            &[("X-Webhook-Signature", "sha256=00ff")],
            "invalid signature",
        ),
        (&[("X-Webhook-Signature", &dev)], "invalid signature"),
    ];
    for (headers, error) in cases {
        let r = receive(&s, body, headers);
        assert_eq!(r.status, 401, "{headers:?}");
        assert_eq!(r.json()["error"], error, "{headers:?}");
    }
    let signed = [
        ("X-Webhook-Signature", good.as_str()),
        ("X-Webhook-Event-Id", "evt-9"),
    ];
    let first = receive(&s, body, &signed);
    assert_eq!(
        first.json(),
        json!({ "received": true, "event": "invoice.paid" })
    );
    // Redelivered, possibly to the other worker: still seen as a duplicate.
    for _ in 0..4 {
        let again = receive(&s, body, &signed);
        assert_eq!(again.json(), json!({ "received": true, "duplicate": true }));
    }
    // No event id: nothing to deduplicate by.
    let r = receive(&s, body, &[("X-Webhook-Signature", good.as_str())]);
    assert_eq!(r.json()["received"], true);
}

/// Hull's own e2e setup: the app subscribes its /webhooks/receive. Hull's
/// single thread could not answer itself (its POST /events waited for the
/// 30 s timeout); here the post goes out while the worker keeps serving,
/// and arrives signed and deduplicated.
///
/// On two workers, the receive lands on either, and the writes of the
/// waiting handler must not keep the other one from writing. JS awaits
/// `flushAsync`; Lua handlers run as coroutines and suspend on their very
/// first http call (suspend.rs) — no warm-up needed.
fn webhooks_deliver_to_the_app_itself(lang: Lang) {
    let s = Server::start_with_env(
        &example_file("webhooks", lang.ext()),
        &["--workers", "2"],
        &[("WEBHOOK_SECRET", SECRET)],
    );
    let mut events = 0;
    let own = format!("http://127.0.0.1:{}/webhooks/receive", s.port);
    subscribe(&s, &own, "user.created");
    for _ in 0..4 {
        events += 1;
        let r = post_event(&s, None, r#"{"event":"user.created"}"#);
        assert_eq!(
            r.json(),
            json!({ "event_id": events, "webhooks_queued": 1 }),
            "{}",
            s.log()
        );
    }
    let stats = s.get("/outbox/stats").json();
    assert_eq!(stats["delivered"], 4, "{stats}\n{}", s.log());
    let log = s.wait_for_log_count("webhook received: user.created", 4);
    assert_eq!(log.matches("webhook received: user.created").count(), 4);
}

fn webhooks_without_a_secret_say_so(lang: Lang) {
    let s = Server::start(&example_file("webhooks", lang.ext()), &[]);
    s.wait_for_log("WEBHOOK_SECRET is not set");
    let body = "{}";
    let dev = signature("whsec_change-me-in-production", body);
    let r = receive(&s, body, &[("X-Webhook-Signature", dev.as_str())]);
    assert_eq!(r.json()["received"], true);
}

fn email(lang: Lang, smtp_port: u16) -> Server {
    let port = smtp_port.to_string();
    Server::start_with_env(
        &example_file("email", lang.ext()),
        &[],
        &[
            ("SMTP_HOST", "127.0.0.1"),
            ("SMTP_PORT", port.as_str()),
            ("SMTP_TLS", "false"),
            ("SMTP_FROM", "app@example.com"),
        ],
    )
}

fn email_reaches_the_smtp_server_and_is_logged(lang: Lang) {
    let sink = Sink::start(None);
    let s = email(lang, sink.port);
    let msg = json!({
        "to": "ada@example.com", "subject": "Hello", "body": "Hi Ada,\r\n.\r\nBye",
        "cc": ["bob@example.com"], "reply_to": "team@example.com",
    });
    let r = s.post("/send", &msg.to_string());
    assert_eq!(r.json(), json!({ "ok": true, "id": 1 }), "{}", s.log());

    let sessions = sink.wait_sessions(1);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let session = &sessions[0];
    assert!(!session.tls);
    let commands = session.commands.join("\n");
    assert!(
        commands.contains("MAIL FROM:<app@example.com>"),
        "{commands}"
    );
    assert!(commands.contains("RCPT TO:<ada@example.com>"), "{commands}");
    assert!(commands.contains("RCPT TO:<bob@example.com>"), "{commands}");
    let message = &session.messages[0];
    for line in [
        "From: app@example.com",
        "To: ada@example.com",
        "Cc: bob@example.com",
        "Reply-To: team@example.com",
        "Subject: Hello",
        "Content-Type: text/plain; charset=utf-8",
    ] {
        assert!(message.contains(line), "{line:?} missing from\n{message}");
    }
    assert!(
        message.contains("\r\n\r\nHi Ada,\r\n..\r\nBye"),
        "dot-stuffed body:\n{message}"
    );

    let sent = s.get("/sent").json();
    assert_eq!(sent[0]["status"], "sent");
    assert_eq!(sent[0]["recipient"], "ada@example.com");
    assert_eq!(sent[0]["cc"], "bob@example.com");
    assert!(sent[0].get("body").is_none(), "{sent}");
    assert_eq!(s.get("/sent/1").json()["body"], "Hi Ada,\r\n.\r\nBye");
}

fn email_failures_are_logged(lang: Lang) {
    let s = email(lang, closed_port());
    let r = s.post(
        "/send",
        r#"{"to":"ada@example.com","subject":"s","body":"b"}"#,
    );
    let v = r.json();
    assert_eq!((&v["ok"], &v["id"]), (&json!(false), &json!(1)), "{v}");
    let error = v["error"].as_str().expect("an error");
    let row = s.get("/sent/1").json();
    assert_eq!(row["status"], "failed");
    assert_eq!(row["error"], error);
    s.wait_for_log("email 1 to ada@example.com failed");
}

/// conformance/reliability/app.<ext> on two workers.
fn reliability_app(lang: Lang) -> Server {
    let app: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/reliability")
        .join(format!("app.{}", lang.ext()));
    Server::start(&app, &[])
}

/// The ttl the expiry checks use. Times are whole seconds (`time.now()`),
/// so a key made at x.999 with a 1 s ttl would expire a millisecond later;
/// with 2 s, the quick steps after making one always fall inside it. (The
/// inbox bodies below and the app's `/short/*` middleware say 2.)
const TTL: u64 = 2;

/// Sleep until everything made with [`TTL`] before this call has expired.
fn outlive_ttl() {
    thread::sleep(Duration::from_millis(TTL * 1000 + 1100));
}

fn inbox_ids_expire_after_their_ttl(lang: Lang) {
    let s = reliability_app(lang);
    let check = |path: &str, body: &str| s.post(path, body).json();
    assert_eq!(
        check("/inbox/check", r#"{"id": "a", "ttl": 2}"#),
        json!({ "duplicate": false })
    );
    assert_eq!(
        check("/inbox/check", r#"{"id": "b", "ttl": 2}"#),
        json!({ "duplicate": false })
    );
    assert_eq!(
        check("/inbox/check", r#"{"id": "a", "ttl": 2}"#),
        json!({ "duplicate": true })
    );
    outlive_ttl();
    // An expired id is new again: check_and_mark takes it over ...
    assert_eq!(
        check("/inbox/check", r#"{"id": "a", "ttl": 2}"#),
        json!({ "duplicate": false })
    );
    // ... is_duplicate forgets it ...
    assert_eq!(
        check("/inbox/is-duplicate", r#"{"id": "b"}"#),
        json!({ "duplicate": false })
    );
    // ... and cleanup deletes what is left: `a` is live again, `b` was
    // deleted by is_duplicate, nothing else expired.
    assert_eq!(s.get("/inbox/cleanup").json(), json!({ "deleted": 0 }));
    outlive_ttl();
    assert_eq!(s.get("/inbox/cleanup").json(), json!({ "deleted": 1 }));
}

fn idempotency_keys_expire_after_their_ttl(lang: Lang) {
    let s = reliability_app(lang);
    let order = |body: &str| {
        let r = s.request(
            "POST",
            "/short/orders",
            &[("Idempotency-Key", "k")],
            Some(body.as_bytes()),
        );
        assert_eq!(r.status, 201, "{}\n{}", r.text(), s.log());
        (
            r.json()["order"].clone(),
            r.header("x-idempotency-replay").is_some(),
        )
    };
    assert_eq!(order("a"), (json!(1), false));
    assert_eq!(order("a"), (json!(1), true));
    outlive_ttl();
    // The expired key is taken over, even with another body.
    assert_eq!(order("b"), (json!(2), false));
    assert_eq!(order("b"), (json!(2), true));
    outlive_ttl();
    assert_eq!(s.get("/idem/cleanup").json(), json!({ "deleted": 1 }));
}
