use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Body as _;

use super::*;

fn published(topic: &str, data: &'static str) -> Arc<Published> {
    Arc::new(Published::new(topic, Bytes::from_static(data.as_bytes()), false).numbered())
}

fn stream(topics: &[&str], first: &[&str]) -> EventStream {
    EventStream {
        topics: topics.iter().map(|t| t.to_string()).collect(),
        first: first
            .iter()
            .map(|d| cove_core::event(None, None, d.as_bytes()).unwrap())
            .collect(),
    }
}

fn local<F: std::future::Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&rt, f)
}

/// The next chunk of `body`.
async fn next(body: &mut Body) -> Option<String> {
    let frame = body.frame().await?.unwrap();
    Some(String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap())
}

#[test]
fn a_subscriber_gets_nothing_published_before_it_subscribed() {
    local(async {
        let live = Live::new(Duration::from_secs(30));
        // Published (numbered by the hub) before the stream subscribes, and
        // handed on by this worker's feed only after.
        let early = published("chat", "before");
        let res = live.events(stream(&["chat"], &[]), hyper::Response::new(Body::empty()));
        let mut body = res.into_body();
        live.deliver(&early);
        live.deliver(&published("chat", "after"));
        assert_eq!(
            next(&mut body).await.unwrap(),
            "event: chat\ndata: after\n\n"
        );
    });
}

#[test]
fn a_stream_sends_its_first_events_then_its_topics_messages() {
    local(async {
        let live = Live::new(Duration::from_secs(30));
        let res = live.events(
            stream(&["chat"], &["hello"]),
            hyper::Response::new(Body::empty()),
        );
        assert_eq!(res.headers()[CONTENT_TYPE], "text/event-stream");
        assert_eq!(res.headers()[CACHE_CONTROL], "no-store");
        let mut body = res.into_body();
        assert!(!body.is_end_stream());
        assert_eq!(next(&mut body).await.unwrap(), "data: hello\n\n");
        live.deliver(&published("other", "not for us"));
        live.deliver(&published("chat", "a\nb"));
        assert_eq!(
            next(&mut body).await.unwrap(),
            "event: chat\ndata: a\ndata: b\n\n"
        );
    });
}

#[test]
fn a_quiet_stream_gets_heartbeats_within_the_idle_timeout() {
    local(async {
        let live = Live::new(Duration::from_secs(10));
        let res = live.events(stream(&["t"], &[]), hyper::Response::new(Body::empty()));
        let mut body = res.into_body();
        let start = tokio::time::Instant::now();
        assert_eq!(next(&mut body).await.unwrap(), ":\n\n");
        assert_eq!(start.elapsed(), Duration::from_secs(5));
    });
}

#[test]
fn a_slow_subscriber_is_dropped_and_its_stream_ends() {
    local(async {
        let live = Live::new(Duration::from_secs(30));
        let res = live.events(stream(&["t"], &[]), hyper::Response::new(Body::empty()));
        let mut body = res.into_body();
        for _ in 0..QUEUE + 1 {
            live.deliver(&published("t", "x"));
        }
        assert_eq!(live.counts(), (1, 0));
        // What was queued still arrives, then the end.
        let mut got = 0;
        while let Some(chunk) = next(&mut body).await {
            assert_eq!(chunk, "event: t\ndata: x\n\n");
            got += 1;
        }
        assert_eq!(got, QUEUE);
        assert_eq!(live.open.get(), 1);
        drop(body);
        assert_eq!(
            live.open.get(),
            0,
            "a finished stream no longer counts as open"
        );
    });
}

#[test]
fn a_worker_follows_the_hub_feed_and_counts_what_it_lost() {
    local(async {
        let live = Rc::new(Live::new(Duration::from_secs(30)));
        let (tx, feed) = broadcast::channel(4);
        let res = live.events(stream(&["t"], &[]), hyper::Response::new(Body::empty()));
        let mut body = res.into_body();
        for i in 0..6 {
            tx.send(published("t", if i < 5 { "old" } else { "new" }))
                .unwrap();
        }
        live.follow(feed);
        // Two were lost (capacity 4); the others arrive in order.
        let mut got = Vec::new();
        for _ in 0..4 {
            got.push(next(&mut body).await.unwrap());
        }
        assert_eq!(got.last().unwrap(), "event: t\ndata: new\n\n");
        assert_eq!(live.counts(), (0, 2));
    });
}
