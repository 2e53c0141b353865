use std::time::Duration;

use bytes::Bytes;

use super::*;

fn message(topic: &str, data: &'static str) -> Arc<Message> {
    Arc::new(Message::new(
        topic,
        Bytes::from_static(data.as_bytes()),
        false,
    ))
}

/// The next message a receiver gets, waiting up to 10 s.
fn next(rx: &mut Receiver) -> Received {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("a message within 10 s")
    })
}

#[test]
fn every_worker_receives_each_message_once_in_order() {
    let hub = Hub::local();
    let (mut a, mut b) = (hub.receiver(), hub.receiver());
    hub.publish("chat", Bytes::from_static(b"one"), false)
        .unwrap();
    hub.publish("news", Bytes::from_static(b"two"), false)
        .unwrap();
    for rx in [&mut a, &mut b] {
        assert_eq!(next(rx), Received::Message(message("chat", "one")));
        assert_eq!(next(rx), Received::Message(message("news", "two")));
    }
    assert_eq!(hub.counts(), (2, 0));
}

#[test]
fn a_worker_that_falls_behind_is_told_how_much_it_lost() {
    let hub = Hub::local();
    let mut rx = hub.receiver();
    for _ in 0..BACKLOG + 5 {
        hub.publish("t", Bytes::from_static(b"x"), false).unwrap();
    }
    assert_eq!(next(&mut rx), Received::Lost(5));
}

#[test]
fn bad_topics_and_oversized_messages_are_refused_with_codes() {
    let hub = Hub::local();
    let err = hub.publish("", Bytes::new(), false).unwrap_err();
    assert_eq!(err.code, "pubsub.topic");
    let long = "t".repeat(MAX_TOPIC + 1);
    assert_eq!(
        hub.publish(&long, Bytes::new(), false).unwrap_err().code,
        "pubsub.topic"
    );
    let big = Bytes::from(vec![0u8; MAX_MESSAGE + 1]);
    assert_eq!(hub.publish("t", big, true).unwrap_err().code, "pubsub.size");
}

#[test]
fn with_redis_a_message_reaches_the_other_process_once_and_its_own_once() {
    let Some(redis) = cove_testsvc::Redis::start() else {
        return;
    };
    let (one, two) = (
        Hub::connect(&redis.url()).unwrap(),
        Hub::connect(&redis.url()).unwrap(),
    );
    let (mut rx1, mut rx2) = (one.receiver(), two.receiver());
    // The subscriptions are made on the I/O thread: publish until the other
    // process has one.
    let (mut got, mut sent) = (None, 0);
    for _ in 0..100 {
        one.publish("room", Bytes::from_static(b"hello"), false)
            .unwrap();
        sent += 1;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let r = rt
            .block_on(async { tokio::time::timeout(Duration::from_millis(100), rx2.recv()).await });
        if let Ok(r) = r {
            got = Some(r);
            break;
        }
    }
    assert_eq!(got, Some(Received::Message(message("room", "hello"))));
    assert!(two.counts().1 >= 1);
    // Back the other way; the publisher's own workers got each of its
    // messages once, from the local channel (none again through Redis).
    two.publish("room", Bytes::from_static(b"back"), true)
        .unwrap();
    for _ in 0..sent {
        assert_eq!(next(&mut rx1), Received::Message(message("room", "hello")));
    }
    let back = Arc::new(Message {
        binary: true,
        ..(*message("room", "back")).clone()
    });
    assert_eq!(next(&mut rx1), Received::Message(back));
}

#[test]
fn a_wrong_redis_url_fails_at_start() {
    let port = cove_testsvc::free_port();
    let err = Hub::connect(&format!("redis://127.0.0.1:{port}/0")).unwrap_err();
    assert!(
        err.contains("cannot connect to Redis at redis://127.0.0.1:"),
        "{err}"
    );
}
