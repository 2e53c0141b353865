//! `res`: status lines, headers, body types, redirects, JSON encoding.

use crate::util::Server;

fn basic() -> Server {
    Server::fixture("basic", &[])
}

#[test]
fn statuses_keep_their_reason_phrase() {
    let s = basic();
    for (code, reason) in [
        (201, "Created"),
        (303, "See Other"),
        (418, "I'm a teapot"),
        (451, "Unavailable For Legal Reasons"),
    ] {
        let mut conn = s.conn();
        conn.send(format!("GET /status/{code} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
        let r = conn.read_response();
        assert_eq!((r.status, r.reason.as_str()), (code, reason));
        assert_eq!(r.text(), format!("status {code}"));
    }
}

#[test]
fn date_header_is_sent() {
    let r = basic().get("/health");
    let date = r.header("date").expect("date header");
    assert!(date.ends_with(" GMT"), "{date}");
}

#[test]
fn explicit_content_type_goes_out_once() {
    let r = basic().get("/csv");
    assert_eq!(r.header_all("content-type"), ["text/csv"]);
    assert_eq!(r.text(), "a");
}

#[test]
fn html_adds_csp() {
    let r = basic().get("/html");
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let csp = r.header("content-security-policy").expect("CSP header");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert_eq!(r.text(), "<p>hi</p>");
}

#[test]
fn redirect_defaults_to_302() {
    let s = basic();
    let r = s.get("/redirect");
    assert_eq!((r.status, r.reason.as_str()), (302, "Found"));
    assert_eq!(r.header_all("location"), ["/target"]);
    assert!(r.body.is_empty());
    let r = s.get("/redirect/see-other");
    assert_eq!((r.status, r.header("location")), (303, Some("/target")));
}

#[test]
fn set_cookie_twice_sends_two_headers() {
    let r = basic().get("/cookies");
    assert_eq!(r.header_all("set-cookie"), ["a=1; Path=/", "b=2; Path=/"]);
}

#[test]
fn invalid_status_is_500() {
    let s = basic();
    let r = s.get("/bad-status");
    assert_eq!(
        (r.status, r.text().as_str()),
        (500, "Internal Server Error")
    );
    // Raised at the handler's line, as Lua's error(msg, 2) would.
    let line = crate::util::line_of(&crate::util::fixture("basic"), "res:status(99)");
    s.wait_for_log(&format!(
        "app.lua:{line}: res:status: invalid status code 99"
    ));
}

#[test]
fn json_large_integers_round_trip_exactly() {
    let r = basic().get("/json/big");
    assert_eq!(r.text(), r#"{"n":9007199254740993}"#);
    assert_eq!(r.header("content-type"), Some("application/json"));
}

#[test]
fn json_empty_table_is_array_and_keys_are_sorted() {
    let s = basic();
    assert_eq!(s.get("/json/empty").text(), "[]");
    assert_eq!(
        s.get("/json/sorted").text(),
        r#"{"alpha":{"a":1,"b":2},"mid":[],"zeta":1}"#
    );
}
