//! Behaviour both backends share, written once and run on a local store and
//! on a real redis-server (skipped, saying so, where none is installed);
//! then what only Redis has: several handles (processes) on one store,
//! its encoding, outages and bad URLs.

use std::thread::sleep;
use std::time::Duration;

use cove_testsvc::Redis;

use super::redis::{decode, encode, PREFIX, TIMEOUT};
use super::*;
use cove_core::CapError;

fn s(v: &str) -> KvValue {
    KvValue::Str(v.as_bytes().to_vec())
}

/// Runs `test` on a local store, then on a fresh Redis.
fn on_both(test: fn(&Kv)) {
    test(&Kv::local());
    if let Some(server) = Redis::start() {
        let kv = Kv::connect(&server.url()).unwrap();
        assert_eq!(kv.backend(), "redis");
        test(&kv);
    }
}

fn f(name: &str) -> &'static KvFn {
    FUNCTIONS.iter().find(|f| f.name == name).unwrap()
}

#[test]
fn set_get_delete() {
    on_both(|kv| {
        assert_eq!(kv.get("a").unwrap(), None);
        kv.set("a", s("1"), None).unwrap();
        assert_eq!(kv.get("a").unwrap(), Some(s("1")));
        kv.set("a", KvValue::Bool(true), None).unwrap();
        assert_eq!(kv.get("a").unwrap(), Some(KvValue::Bool(true)));
        assert!(kv.delete("a").unwrap());
        assert!(!kv.delete("a").unwrap());
        assert_eq!(kv.get("a").unwrap(), None);
    });
}

#[test]
fn values_keep_their_types() {
    on_both(|kv| {
        let values = [
            s(""),
            s("42"),
            s("d1.5"),
            KvValue::Str(vec![0, 0xff, b'\n', b's']),
            KvValue::Int(0),
            KvValue::Int(-7),
            KvValue::Int(i64::MAX),
            KvValue::Int(i64::MIN),
            KvValue::Float(1.5),
            KvValue::Float(0.1),
            KvValue::Float(-1e300),
            KvValue::Float(f64::INFINITY),
            KvValue::Float(3.0),
            KvValue::Bool(true),
            KvValue::Bool(false),
        ];
        for (i, v) in values.iter().enumerate() {
            let key = format!("v{i}");
            kv.set(&key, v.clone(), None).unwrap();
            assert_eq!(kv.get(&key).unwrap().as_ref(), Some(v), "{v:?}");
        }
        kv.set("nan", KvValue::Float(f64::NAN), None).unwrap();
        assert!(matches!(kv.get("nan").unwrap(), Some(KvValue::Float(n)) if n.is_nan()));
    });
}

#[test]
fn incr_counts_from_zero_and_keeps_the_first_ttl() {
    on_both(|kv| {
        assert_eq!(kv.incr("n", 1, Some(60.0)).unwrap(), 1);
        assert_eq!(kv.incr("n", 2, Some(1.0)).unwrap(), 3);
        let left = kv.ttl("n").unwrap().unwrap();
        assert!(left > 50.0 && left <= 60.0, "{left}");
        assert_eq!(kv.get("n").unwrap(), Some(KvValue::Int(3)));
        assert_eq!(kv.incr("plain", -5, None).unwrap(), -5);
        assert_eq!(kv.ttl("plain").unwrap(), None);
        for v in [s("x"), s("12"), KvValue::Float(1.0), KvValue::Bool(true)] {
            kv.set("s", v, None).unwrap();
            assert_eq!(kv.incr("s", 1, None), Err(KvError::NotInteger("s".into())));
            assert_eq!(
                kv.incr("s", 1, Some(5.0)),
                Err(KvError::NotInteger("s".into()))
            );
        }
        assert_eq!(kv.ttl("s").unwrap(), None, "a refused incr gives no ttl");
        kv.set("big", KvValue::Int(i64::MAX), None).unwrap();
        assert_eq!(kv.incr("big", 1, None), Err(KvError::Overflow));
        assert_eq!(kv.get("big").unwrap(), Some(KvValue::Int(i64::MAX)));
    });
}

#[test]
fn expired_keys_are_gone() {
    on_both(|kv| {
        kv.set("t", s("v"), Some(0.05)).unwrap();
        assert_eq!(kv.ttl("nothing").unwrap(), None);
        let left = kv.ttl("t").unwrap().unwrap();
        assert!(left > 0.0 && left <= 0.05, "{left}");
        sleep(Duration::from_millis(100));
        assert_eq!(kv.get("t").unwrap(), None);
        assert_eq!(kv.ttl("t").unwrap(), None);
        assert!(!kv.delete("t").unwrap());
        assert_eq!(kv.incr("t", 5, None).unwrap(), 5);
        assert_eq!(kv.ttl("t").unwrap(), None);
        assert_eq!(kv.get("t").unwrap(), Some(KvValue::Int(5)));
        // Setting again without a ttl clears the old one.
        kv.set("u", s("v"), Some(60.0)).unwrap();
        kv.set("u", s("w"), None).unwrap();
        assert_eq!(kv.ttl("u").unwrap(), None);
    });
}

#[test]
fn add_only_sets_missing_keys() {
    on_both(|kv| {
        assert!(kv.add("once", s("a"), Some(10.0)).unwrap());
        assert!(!kv.add("once", s("b"), None).unwrap());
        assert_eq!(kv.get("once").unwrap(), Some(s("a")));
        assert!(kv.ttl("once").unwrap().is_some());
        kv.set("gone", s("a"), Some(0.02)).unwrap();
        sleep(Duration::from_millis(60));
        assert!(kv.add("gone", KvValue::Int(2), None).unwrap());
        assert_eq!(kv.get("gone").unwrap(), Some(KvValue::Int(2)));
    });
}

#[test]
fn bad_input_is_refused() {
    on_both(|kv| {
        assert_eq!(kv.get(""), Err(KvError::BadKey));
        assert_eq!(kv.get(&"k".repeat(MAX_KEY + 1)), Err(KvError::BadKey));
        kv.set(&"k".repeat(MAX_KEY), s("v"), None).unwrap();
        assert_eq!(kv.set("k", s("v"), Some(-1.0)), Err(KvError::BadTtl));
        assert_eq!(kv.set("k", s("v"), Some(0.0)), Err(KvError::BadTtl));
        assert_eq!(kv.set("k", s("v"), Some(f64::NAN)), Err(KvError::BadTtl));
        assert_eq!(kv.incr("k", 1, Some(f64::INFINITY)), Err(KvError::BadTtl));
        let big = KvValue::Str(vec![b'x'; MAX_VALUE + 1]);
        assert_eq!(kv.set("k", big.clone(), None), Err(KvError::TooLarge));
        assert_eq!(kv.add("k", big, None), Err(KvError::TooLarge));
        let most = KvValue::Str(vec![b'x'; MAX_VALUE]);
        kv.set("k", most.clone(), None).unwrap();
        assert_eq!(kv.get("k").unwrap(), Some(most));
    });
}

#[test]
fn clones_share_data() {
    on_both(|kv| {
        let other = kv.clone();
        kv.set("k", KvValue::Int(7), None).unwrap();
        assert_eq!(other.get("k").unwrap(), Some(KvValue::Int(7)));
    });
}

#[test]
fn workers_on_threads_share_one_counter() {
    on_both(|kv| {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let kv = kv.clone();
                std::thread::spawn(move || {
                    for _ in 0..500 {
                        kv.incr("hits", 1, Some(60.0)).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(kv.get("hits").unwrap(), Some(KvValue::Int(2000)));
    });
}

#[test]
fn calls_run_through_the_table() {
    on_both(|kv| {
        let k = || KvArg::Key("c".into());
        let out = f("incr").call(kv, &[k(), KvArg::Step(None), KvArg::Ttl(None)]);
        assert_eq!(out, Ok(KvOut::Int(1)));
        let out = f("incr").call(kv, &[k(), KvArg::Step(Some(4)), KvArg::Ttl(None)]);
        assert_eq!(out, Ok(KvOut::Int(5)));
        assert_eq!(
            f("get").call(kv, &[k()]),
            Ok(KvOut::Value(Some(KvValue::Int(5))))
        );
        let args = [k(), KvArg::Value(s("x")), KvArg::Ttl(Some(30.0))];
        assert_eq!(f("add").call(kv, &args), Ok(KvOut::Bool(false)));
        assert_eq!(f("set").call(kv, &args), Ok(KvOut::Nothing));
        assert!(matches!(f("ttl").call(kv, &[k()]), Ok(KvOut::Seconds(Some(t))) if t > 29.0));
        assert_eq!(f("delete").call(kv, &[k()]), Ok(KvOut::Bool(true)));
        let err = f("get").call(kv, &[KvArg::Key(String::new())]).unwrap_err();
        assert!(err.message.starts_with("kv.get: key must be"), "{err}");
        assert_eq!(err.code, "kv.bad_key");
        let err = f("incr").call(kv, &[k(), KvArg::Step(None), KvArg::Ttl(Some(-1.0))]);
        assert_eq!(
            err,
            Err(CapError::new(
                "kv.bad_ttl",
                "kv.incr: ttl must be a positive number of seconds"
            ))
        );
        kv.set("w", s("word"), None).unwrap();
        let err = f("incr").call(kv, &[KvArg::Key("w".into())]);
        assert_eq!(
            err,
            Err(CapError::new(
                "kv.not_integer",
                "kv.incr: value of \"w\" is not an integer"
            ))
        );
        assert_eq!(
            f("set").bad_arg(KvParam::Value),
            "kv.set: value must be a string, number or boolean (encode tables with json.encode)"
        );
    });
}

#[test]
fn the_local_store_answers_at_once_and_redis_with_a_future() {
    let k = [KvArg::Key("k".into())];
    let local = Kv::local();
    assert_eq!(local.backend(), "memory");
    assert!(matches!(f("get").start(&local, &k), KvCall::Done(Ok(_))));
    let Some(server) = Redis::start() else { return };
    let kv = Kv::connect(&server.url()).unwrap();
    // Refused input is answered without a round trip.
    let bad = [KvArg::Key(String::new())];
    assert!(matches!(f("get").start(&kv, &bad), KvCall::Done(Err(_))));
    let KvCall::Pending(reply) = f("incr").start(&kv, &k) else {
        panic!("a Redis call is a future");
    };
    // Awaited on a worker-like runtime (current-thread, its own reactor):
    // the connection is driven on the cove-io thread, not here.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(rt.block_on(reply), Ok(KvOut::Int(1)));
    // And blocked on inside that runtime (a job run inline).
    let out = rt.block_on(async { f("incr").call(&kv, &k) });
    assert_eq!(out, Ok(KvOut::Int(2)));
}

// --- Redis only ---

/// A plain connection to look at what Cove stored.
fn raw(server: &Redis) -> ::redis::Connection {
    ::redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

#[test]
fn redis_ttls_are_milliseconds() {
    let Some(server) = Redis::start() else { return };
    let kv = Kv::connect(&server.url()).unwrap();
    kv.set("short", s("v"), Some(0.2)).unwrap();
    kv.incr("count", 1, Some(0.2)).unwrap();
    assert!(kv.add("lock", KvValue::Bool(true), Some(0.2)).unwrap());
    let left = kv.ttl("short").unwrap().unwrap();
    assert!(left > 0.0 && left <= 0.2, "{left}");
    assert_eq!(left, (left * 1000.0).round() / 1000.0, "whole ms: {left}");
    sleep(Duration::from_millis(300));
    assert_eq!(kv.get("short").unwrap(), None);
    assert_eq!(kv.get("count").unwrap(), None);
    assert!(kv.add("lock", KvValue::Bool(true), None).unwrap());
    // Under a millisecond still expires.
    kv.set("tiny", s("v"), Some(0.0001)).unwrap();
    sleep(Duration::from_millis(20));
    assert_eq!(kv.get("tiny").unwrap(), None);
}

#[test]
fn redis_handles_of_two_processes_share_one_store() {
    let Some(server) = Redis::start() else { return };
    let a = Kv::connect(&server.url()).unwrap();
    let b = Kv::connect(&server.url()).unwrap();
    a.set("greeting", s("hi"), None).unwrap();
    assert_eq!(b.get("greeting").unwrap(), Some(s("hi")));
    assert_eq!(a.incr("n", 1, Some(60.0)).unwrap(), 1);
    assert_eq!(b.incr("n", 1, Some(1.0)).unwrap(), 2);
    assert!(b.ttl("n").unwrap().unwrap() > 50.0, "b's ttl did not apply");
    assert!(!b.add("greeting", s("other"), None).unwrap());
    assert!(b.delete("greeting").unwrap());
    assert_eq!(a.get("greeting").unwrap(), None);

    // Threads of both "processes" counting at once sum exactly.
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let kv = if i % 2 == 0 { a.clone() } else { b.clone() };
            std::thread::spawn(move || {
                for _ in 0..250 {
                    kv.incr("hits", 1, Some(60.0)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(a.get("hits").unwrap(), Some(KvValue::Int(2000)));
}

#[test]
fn redis_keeps_values_tagged_under_its_namespace() {
    let Some(server) = Redis::start() else { return };
    let kv = Kv::connect(&server.url()).unwrap();
    let mut conn = raw(&server);
    let stored = |conn: &mut ::redis::Connection, key: &str| -> Option<Vec<u8>> {
        ::redis::cmd("GET")
            .arg(format!("{PREFIX}{key}"))
            .query(conn)
            .unwrap()
    };
    kv.set("s", s("text"), None).unwrap();
    kv.set("i", KvValue::Int(-42), None).unwrap();
    kv.set("f", KvValue::Float(1.5), None).unwrap();
    kv.set("b", KvValue::Bool(false), None).unwrap();
    kv.incr("n", 3, None).unwrap();
    assert_eq!(stored(&mut conn, "s").unwrap(), b"stext");
    assert_eq!(stored(&mut conn, "i").unwrap(), b"-42");
    assert_eq!(stored(&mut conn, "f").unwrap(), b"d1.5");
    assert_eq!(stored(&mut conn, "b").unwrap(), b"b0");
    assert_eq!(stored(&mut conn, "n").unwrap(), b"3");
    // Other users' keys are untouched and unseen.
    let _: () = ::redis::cmd("SET")
        .arg("s")
        .arg("theirs")
        .query(&mut conn)
        .unwrap();
    assert_eq!(kv.get("s").unwrap(), Some(s("text")));
    // What Cove did not write is refused, not guessed at.
    let _: () = ::redis::cmd("SET")
        .arg(format!("{PREFIX}raw"))
        .arg("hello")
        .query(&mut conn)
        .unwrap();
    assert_eq!(kv.get("raw"), Err(KvError::Foreign("raw".into())));
    let _: () = ::redis::cmd("RPUSH")
        .arg(format!("{PREFIX}list"))
        .arg("x")
        .query(&mut conn)
        .unwrap();
    assert_eq!(kv.get("list"), Err(KvError::Foreign("list".into())));
    assert_eq!(
        kv.incr("list", 1, None),
        Err(KvError::Foreign("list".into()))
    );
}

#[test]
fn the_encoding_round_trips_and_rejects_strangers() {
    for v in [
        s(""),
        s("x"),
        KvValue::Int(-1),
        KvValue::Float(2.5),
        KvValue::Bool(true),
    ] {
        assert_eq!(decode(&encode(&v)), Some(v));
    }
    for raw in [&b""[..], b"hello", b"b2", b"dx", b"12a", b"-"] {
        assert_eq!(decode(raw), None, "{raw:?}");
    }
}

#[test]
fn redis_down_fails_each_call_clearly_and_recovers() {
    let Some(server) = Redis::start() else { return };
    let url = server.url();
    let kv = Kv::connect(&url).unwrap();
    kv.set("k", s("v"), None).unwrap();

    server.stop();
    let unavailable = |e: KvError| match e {
        KvError::Unavailable { url: at, reason } => {
            assert_eq!(at, url);
            reason
        }
        other => panic!("expected Unavailable, got {other:?}"),
    };
    for _ in 0..2 {
        let reason = unavailable(kv.get("k").unwrap_err());
        assert_eq!(reason, "Connection refused");
    }
    let err = f("incr").call(&kv, &[KvArg::Key("n".into())]).unwrap_err();
    assert!(
        err.code == "kv.unavailable"
            && err
                .message
                .starts_with(&format!("kv.incr: Redis unavailable at {url}: ")),
        "{err}"
    );

    // Back (empty): the next call reconnects and succeeds.
    server.restart();
    assert_eq!(kv.get("k").unwrap(), None);
    assert_eq!(kv.incr("n", 1, None).unwrap(), 1);

    // Restarted with no call while it was down: the first call succeeds.
    server.restart();
    assert_eq!(kv.incr("n", 1, None).unwrap(), 1);
    server.restart();
    assert_eq!(kv.get("n").unwrap(), None);
}

#[test]
fn a_hung_redis_times_out() {
    let Some(server) = Redis::start() else { return };
    let kv = Kv::connect(&server.url()).unwrap();
    let mut conn = raw(&server);
    let pause = (TIMEOUT + Duration::from_millis(500)).as_millis() as u64;
    let _: () = ::redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(pause)
        .arg("ALL")
        .query(&mut conn)
        .unwrap();
    let err = kv.get("k").unwrap_err();
    assert_eq!(
        err,
        KvError::Unavailable {
            url: server.url(),
            reason: format!("no reply within {} s", TIMEOUT.as_secs()),
        }
    );
    sleep(Duration::from_millis(700));
    kv.set("k", s("v"), None).unwrap();
    assert_eq!(kv.get("k").unwrap(), Some(s("v")));
}

#[test]
fn bad_urls_fail_at_connect_with_advice() {
    let port = cove_testsvc::free_port();
    let err = Kv::connect(&format!("redis://127.0.0.1:{port}/0")).unwrap_err();
    assert_eq!(
        err,
        format!(
            "cannot connect to Redis at redis://127.0.0.1:{port}/0: Connection refused; \
             is redis-server running?"
        )
    );
    let err = Kv::connect(&format!("redis://:s3cret@127.0.0.1:{port}/0")).unwrap_err();
    assert!(!err.contains("s3cret"), "{err}");
    assert!(err.starts_with(&format!(
        "cannot connect to Redis at redis://127.0.0.1:{port}/0:"
    )));
    let err = Kv::connect("http://127.0.0.1/").unwrap_err();
    assert!(err.contains("is not a Redis URL"), "{err}");
    let err = Kv::connect("rediss://cache.internal:6380/0").unwrap_err();
    assert!(err.contains("TLS (rediss://) is not built in"), "{err}");
    let err = Kv::connect("redis://127.0.0.1:notaport/0").unwrap_err();
    assert!(
        err.starts_with("bad Redis URL redis://127.0.0.1:notaport/0"),
        "{err}"
    );

    let Some(server) = Redis::start() else { return };
    let mut conn = raw(&server);
    let _: () = ::redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("right")
        .query(&mut conn)
        .unwrap();
    let at = format!("127.0.0.1:{}/0", server.port());
    let err = Kv::connect(&format!("redis://:wr0ngpw@{at}")).unwrap_err();
    assert!(
        err.starts_with(&format!("cannot connect to Redis at redis://{at}: ")),
        "{err}"
    );
    assert!(err.ends_with("; check the password in the URL"), "{err}");
    assert!(!err.contains("wr0ngpw"), "{err}");
    let kv = Kv::connect(&format!("redis://:right@{at}")).unwrap();
    kv.set("k", s("v"), None).unwrap();
    assert!(format!("{kv:?}").contains(&format!("redis://{at}")));
}

#[test]
fn an_explicit_resp2_url_is_honoured() {
    let Some(server) = Redis::start() else { return };
    let kv = Kv::connect(&format!("{}?protocol=resp2", server.url())).unwrap();
    kv.set("k", s("v"), None).unwrap();
    assert_eq!(kv.get("k").unwrap(), Some(s("v")));
    // Without RESP3's disconnect notice the manager learns of a restart
    // from the first call after it, which may fail; the next one works.
    server.restart();
    if let Err(e) = kv.incr("n", 1, None) {
        assert!(matches!(e, KvError::Unavailable { .. }), "{e:?}");
    }
    assert!(kv.incr("n", 1, None).unwrap() >= 1);
}
