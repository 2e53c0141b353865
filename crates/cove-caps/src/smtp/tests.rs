use serde_json::{json, Value};

use super::*;

fn hosts() -> Vec<String> {
    vec!["127.0.0.1".into(), "smtp.example.com".into()]
}

fn opts(extra: Value) -> Value {
    let mut o = json!({
        "host": "127.0.0.1", "port": 2525, "from": "a@example.com",
        "to": "b@example.com", "subject": "Hi", "body": "Hello",
    });
    for (k, v) in extra.as_object().unwrap() {
        o[k] = v.clone();
    }
    o
}

fn err(extra: Value) -> String {
    prepare(&hosts(), &opts(extra)).unwrap_err().to_string()
}

#[test]
fn not_configured_raises() {
    let e = prepare(&[], &opts(json!({}))).unwrap_err();
    assert_eq!(e.to_string(), "smtp not configured (no hosts in manifest)");
    assert!(e.raises());
    assert!(!SmtpError::Required("to").raises());
}

#[test]
fn required_fields_in_hulls_order() {
    for field in ["host", "from", "to", "subject", "body"] {
        assert_eq!(err(json!({ field: null })), format!("{field} required"));
        assert_eq!(err(json!({ field: "" })), format!("{field} required"));
    }
    assert_eq!(
        prepare(&hosts(), &json!({})).unwrap_err(),
        SmtpError::Required("host")
    );
}

#[test]
fn options_are_checked() {
    assert_eq!(
        err(json!({"host": "evil.com"})),
        r#"smtp send failed: host "evil.com" is not in the manifest's hosts list (hosts: "127.0.0.1", "smtp.example.com")"#
    );
    assert!(prepare(&hosts(), &opts(json!({"host": "SMTP.example.com"}))).is_ok());
    assert!(err(json!({"subject": "a\r\nBcc: x@y"})).contains("subject contains CR or LF"));
    assert!(err(json!({"to": "b@x.com\nBcc: x@y"})).contains("to contains CR or LF"));
    assert!(err(json!({"cc": ["ok@x.com", "b\r@x"]})).contains("cc contains CR or LF"));
    assert!(err(json!({"reply_to": "r\n"})).contains("reply_to contains CR or LF"));
    assert!(err(json!({"content_type": "text/html\r\nX: y"})).contains("content_type"));
    assert!(err(json!({"tls": 3})).contains("tls must be"));
    assert!(err(json!({"tls": "yes"})).contains("tls must be"));
    assert!(err(json!({"port": 0})).contains("port must be 1-65535"));
    assert!(err(json!({"port": "25"})).contains("port must be a number"));
    assert!(err(json!({"cc": "x@y"})).contains("cc must be a list"));
    assert!(err(json!({"subject": 5})).contains("subject must be a string"));
    assert!(err(json!({"body": "x".repeat(MAX_MESSAGE + 1)})).contains("larger than"));
}

#[test]
fn credentials_need_tls() {
    let e = err(json!({"username": "u", "password": "p"}));
    assert!(e.starts_with("smtp send failed: refusing to send the username and password over a plain-text connection"), "{e}");
    assert!(err(json!({"username": "u", "tls": 0})).contains("refusing"));
    for tls in [json!(true), json!(1), json!(2)] {
        let p = prepare(
            &hosts(),
            &opts(json!({"username": "u", "password": "p", "tls": tls})),
        );
        assert!(p.is_ok());
    }
    let p = prepare(&hosts(), &opts(json!({"tls": 2}))).unwrap();
    assert_eq!(p.security, Security::Implicit);
    let p = prepare(&hosts(), &opts(json!({"tls": true, "port": null}))).unwrap();
    assert_eq!((p.security, p.port), (Security::StartTls, DEFAULT_PORT));
    let p = prepare(&hosts(), &opts(json!({"cc": {}}))).unwrap();
    assert!(p.cc.is_empty());
}

#[test]
fn the_message_has_hulls_headers() {
    let p = prepare(
        &hosts(),
        &opts(json!({
            "cc": ["c@example.com"], "reply_to": "r@example.com",
            "content_type": "text/html", "body": "<p>x</p>\n.dot\n",
        })),
    )
    .unwrap();
    assert_eq!(p.content_type, "text/html; charset=utf-8");
    let text = String::from_utf8(send::message_for_test(&p)).unwrap();
    for header in [
        "From: a@example.com\r\n",
        "To: b@example.com\r\n",
        "Cc: c@example.com\r\n",
        "Reply-To: r@example.com\r\n",
        "Subject: Hi\r\n",
        "MIME-Version: 1.0\r\n",
        "Content-Type: text/html; charset=utf-8\r\n",
        "Date: ",
    ] {
        assert!(text.contains(header), "{header:?} missing in\n{text}");
    }
    let bad = prepare(&hosts(), &opts(json!({"from": "not an address"}))).unwrap();
    let e = bad.send().unwrap_err().to_string();
    assert!(
        e.starts_with("smtp send failed: invalid from address"),
        "{e}"
    );
}

#[test]
fn connection_refused_is_a_result() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let p = prepare(&hosts(), &opts(json!({ "port": port }))).unwrap();
    let e = p.send().unwrap_err().to_string();
    assert!(e.starts_with("smtp send failed: "), "{e}");
    assert!(e.to_lowercase().contains("refused"), "{e}");
    assert!(e.ends_with(&format!("(127.0.0.1:{port})")), "{e}");
}
