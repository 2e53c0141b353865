use std::time::{Duration, UNIX_EPOCH};

use super::event::{push_timestamp, MAX_VALUE};
use super::*;

#[test]
fn timestamps_are_rfc3339_utc_with_milliseconds() {
    let mut s = String::new();
    push_timestamp(
        &mut s,
        UNIX_EPOCH + Duration::from_millis(1_772_883_296_007),
    );
    assert_eq!(s, "2026-03-07T11:34:56.007Z");
    s.clear();
    push_timestamp(&mut s, UNIX_EPOCH + Duration::from_millis(951_782_400_999));
    assert_eq!(s, "2000-02-29T00:00:00.999Z");
}

#[test]
fn a_line_is_one_json_object_with_the_common_keys_first() {
    let ctx = Context {
        worker: Some(3),
        request_id: Some("w3-1".into()),
    };
    let line = Event::at(UNIX_EPOCH, &ctx, "http.request")
        .str("host", "a\"b\\c\nd\u{1}")
        .int("status", 200)
        .bool("ok", true)
        .null("missing")
        .strs("list", ["x", "y"])
        .ints("ports", [80, 443])
        .line();
    assert_eq!(
        line,
        "{\"ts\":\"1970-01-01T00:00:00.000Z\",\"cap\":\"http.request\",\"worker\":3,\
         \"request_id\":\"w3-1\",\"host\":\"a\\\"b\\\\c\\nd\\u0001\",\"status\":200,\
         \"ok\":true,\"missing\":null,\"list\":[\"x\",\"y\"],\"ports\":[80,443]}\n"
    );
}

#[test]
fn outside_a_worker_and_a_request_both_are_null() {
    let line = Event::at(UNIX_EPOCH, &Context::default(), "env.get").line();
    assert!(
        line.contains("\"worker\":null,\"request_id\":null}"),
        "{line}"
    );
}

#[test]
fn long_values_are_cut_at_a_character_boundary() {
    let long = "é".repeat(MAX_VALUE);
    let line = Event::at(UNIX_EPOCH, &Context::default(), "db.exec")
        .str("sql", &long)
        .line();
    let start = line.find("\"sql\":\"").unwrap() + 7;
    let kept = &line[start..line.len() - 3];
    assert_eq!(kept.len(), MAX_VALUE);
    assert!(kept.chars().all(|c| c == 'é'));
}

// Each test runs on its own thread, so the thread-locals start empty.
#[test]
fn a_scope_sets_the_request_only_while_entered() {
    set_worker(2);
    let a = RequestScope::new();
    let b = RequestScope::new();
    assert_eq!(&*a.id(), "w2-1");
    assert_eq!(&*b.id(), "w2-2");
    assert_eq!(context().request_id, None);
    {
        let _in = a.enter();
        assert_eq!(context().request_id.as_deref(), Some("w2-1"));
        assert_eq!(context().worker, Some(2));
    }
    assert_eq!(context().request_id, None);
    // Interleaved: b runs while a waits, then a resumes.
    drop(b.enter());
    let _in = a.enter();
    assert_eq!(context().request_id.as_deref(), Some("w2-1"));
}

#[test]
fn an_adopted_id_stays_with_its_request() {
    let a = RequestScope::new();
    let b = RequestScope::new();
    adopt_request_id("outside"); // No request: nothing changes.
    {
        let _in = a.enter();
        adopt_request_id("7f");
        assert_eq!(context().request_id.as_deref(), Some("7f"));
    }
    {
        let _in = b.enter();
        assert_ne!(context().request_id.as_deref(), Some("7f"));
    }
    let _in = a.enter();
    assert_eq!(context().request_id.as_deref(), Some("7f"));
    assert_eq!(&*a.id(), "7f");
}

#[test]
fn a_response_x_request_id_names_the_request() {
    // Turning the log on here is harmless to the other tests of this crate:
    // nothing in it writes lines, and scopes are per thread.
    enable();
    let scope = RequestScope::new();
    let _in = scope.enter();
    let mut res = crate::Response::new();
    res.add_header("X-Other", "1").unwrap();
    assert_ne!(&*scope.id(), "1");
    res.add_header("x-request-id", "2a").unwrap();
    assert_eq!(&*scope.id(), "2a");
}
