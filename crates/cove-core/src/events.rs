//! Server-Sent Events (the `text/event-stream` format of the HTML
//! standard): a response that stays open and carries the messages
//! published to the topics it subscribed to.
//!
//! A handler turns its response into a stream ([`Response::events`]),
//! names the topics and may queue events to send at once. Once the
//! handler has returned, the server keeps the connection and writes each
//! message published to one of the topics (cove-caps `pubsub`) as an
//! event named after its topic.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use crate::Response;

/// A message published to a topic (cove-caps `pubsub`), as every worker
/// receives it.
#[derive(Debug, Clone, Eq)]
pub struct Published {
    pub topic: Arc<str>,
    pub data: Bytes,
    /// Sent as binary (WebSocket binary frames) rather than text.
    pub binary: bool,
    /// Its place among the messages published in this process
    /// ([`Published::numbered`]); 0 until the hub takes it.
    pub seq: u64,
}

/// The same message: topic, data and kind (its number aside).
impl PartialEq for Published {
    fn eq(&self, other: &Published) -> bool {
        (&self.topic, &self.data, self.binary) == (&other.topic, &other.data, other.binary)
    }
}

/// The number of the last message that entered this process's hub.
static PUBLISHED: AtomicU64 = AtomicU64::new(0);

impl Published {
    /// A message for `topic`, not yet numbered.
    pub fn new(topic: &str, data: Bytes, binary: bool) -> Published {
        Published {
            topic: topic.into(),
            data,
            binary,
            seq: 0,
        }
    }

    /// This message, numbered as the latest to enter the hub (a hub
    /// numbers each message it sends to the workers).
    pub fn numbered(mut self) -> Published {
        self.seq = PUBLISHED.fetch_add(1, Ordering::Relaxed) + 1;
        self
    }
}

/// The number of the last message published in this process so far: a
/// subscription made now receives the messages numbered above it, and
/// none published before it, whichever worker published them and however
/// late the worker's feed hands them on.
pub fn published_so_far() -> u64 {
    PUBLISHED.load(Ordering::Relaxed)
}

/// One worker's feed of every published message (a broadcast channel: a
/// worker that falls behind is told how many it lost).
pub type Feed = tokio::sync::broadcast::Receiver<Arc<Published>>;

/// Topics one stream may subscribe to.
pub const MAX_TOPICS: usize = 64;
/// Longest topic name, in bytes.
pub const MAX_TOPIC: usize = 256;
/// Largest published message, in bytes.
pub const MAX_MESSAGE: usize = 1024 * 1024;
/// What `app.publish` says when no request is in progress (at load time).
pub const PUBLISH_OUTSIDE_REQUEST: &str = "app.publish: call it from a handler or middleware (its messages are sent when the request's writes commit)";

/// Messages one request may publish.
pub const MAX_OUTBOX: usize = 1024;

/// Sends a message to every subscriber of its topic (the process's
/// pub/sub hub, cove-caps `pubsub`); the server calls it for each message
/// a request published, once the request's writes are committed.
pub type Publisher = Arc<dyn Fn(Published) + Send + Sync>;

/// Why a topic name is refused, if it is.
pub fn check_topic(topic: &str) -> Result<(), String> {
    if topic.is_empty() || topic.len() > MAX_TOPIC {
        return Err(format!(
            "a topic is a non-empty string of at most {MAX_TOPIC} bytes"
        ));
    }
    Ok(())
}

/// Why a message is refused, if it is.
pub fn check_message(data: &[u8]) -> Result<(), String> {
    if data.len() > MAX_MESSAGE {
        return Err(format!(
            "a message is limited to {MAX_MESSAGE} bytes (this one has {})",
            data.len()
        ));
    }
    Ok(())
}

/// What a response carries beyond its head and body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveParts {
    /// Set when the response is an event stream.
    pub events: Option<EventStream>,
    /// Messages published while the request ran, sent with the response
    /// ([`Response::publish`]).
    pub outbox: Vec<Published>,
    /// Set when the response is a WebSocket event's: the event, and the
    /// commands its handler gives.
    pub socket: Option<crate::SocketTurn>,
}

/// What makes a response an event stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventStream {
    /// The topics whose messages the stream carries.
    pub topics: Vec<String>,
    /// Events written at once, before any published message: each already
    /// in the wire format ([`event`]).
    pub first: Vec<Bytes>,
}

/// One event in the wire format: an optional `event:` name, an optional
/// `id:`, then `data:`, one line per line of `data`, then a blank line.
/// A name or id with a line break is refused (it would end the field).
pub fn event(name: Option<&str>, id: Option<&str>, data: &[u8]) -> Result<Bytes, String> {
    let mut out = Vec::with_capacity(data.len() + 16);
    for (field, label, value) in [("event", "name", name), ("id", "id", id)] {
        let Some(value) = value else { continue };
        if value.contains(['\r', '\n']) {
            return Err(format!("an event's {label} cannot contain a line break"));
        }
        out.extend_from_slice(field.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.push(b'\n');
    }
    // Each line of the data on a `data:` line of its own (CRLF, LF or CR
    // end a line), so text with line breaks arrives as it was.
    let text = data.split(|&b| b == b'\n');
    for line in text {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        for part in line.split(|&b| b == b'\r') {
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(part);
            out.push(b'\n');
        }
    }
    out.push(b'\n');
    Ok(Bytes::from(out))
}

impl Response {
    /// Make this response an event stream subscribed to `topic` (as well as
    /// any topic named before).
    pub fn subscribe(&mut self, topic: &str) -> Result<(), String> {
        check_topic(topic)?;
        let stream = self.stream();
        if !stream.topics.iter().any(|t| t == topic) {
            if stream.topics.len() >= MAX_TOPICS {
                return Err(format!(
                    "an event stream subscribes to at most {MAX_TOPICS} topics"
                ));
            }
            stream.topics.push(topic.to_string());
        }
        Ok(())
    }

    /// The event stream this response is, made one now if it was not.
    fn stream(&mut self) -> &mut EventStream {
        self.live
            .get_or_insert_with(Default::default)
            .events
            .get_or_insert_with(Default::default)
    }

    /// Make this response an event stream, sending `event` first.
    pub fn send_event(&mut self, event: Bytes) {
        self.stream().first.push(event);
    }

    /// Publish `data` to `topic` when this response is sent: after the
    /// request's writes commit, so a subscriber that reads the database on
    /// receiving it sees them; never, when the handler fails or its writes
    /// do not commit (the response is replaced, and its messages with it).
    pub fn publish(&mut self, topic: &str, data: Bytes, binary: bool) -> Result<(), String> {
        check_topic(topic)?;
        check_message(&data)?;
        let outbox = &mut self.live.get_or_insert_with(Default::default).outbox;
        if outbox.len() >= MAX_OUTBOX {
            return Err(format!("a request publishes at most {MAX_OUTBOX} messages"));
        }
        outbox.push(Published::new(topic, data, binary));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_lines_and_refuse_breaks_in_names() {
        let e = event(Some("chat"), Some("7"), b"one\ntwo\r\nthree").unwrap();
        assert_eq!(
            &e[..],
            b"event: chat\nid: 7\ndata: one\ndata: two\ndata: three\n\n"
        );
        assert_eq!(&event(None, None, b"").unwrap()[..], b"data: \n\n");
        assert!(event(Some("a\nb"), None, b"x")
            .unwrap_err()
            .contains("line break"));
    }

    #[test]
    fn published_messages_wait_in_the_response() {
        let mut res = Response::default();
        res.publish("room:1", Bytes::from_static(b"hi"), false)
            .unwrap();
        assert!(res.publish("", Bytes::new(), false).is_err());
        let big = Bytes::from(vec![0u8; MAX_MESSAGE + 1]);
        assert!(res
            .publish("t", big, false)
            .unwrap_err()
            .contains("limited"));
        let outbox = &res.live.as_deref().unwrap().outbox;
        assert_eq!(outbox.len(), 1);
        assert_eq!(&*outbox[0].topic, "room:1");
        for i in 1..MAX_OUTBOX {
            res.publish("t", Bytes::from(i.to_string()), false).unwrap();
        }
        assert!(res.publish("t", Bytes::new(), false).is_err());
        // A response made anew (a failed handler's 500) carries none.
        assert!(Response::default().live.is_none());
        assert!(
            res.live.unwrap().events.is_none(),
            "publishing makes no stream"
        );
    }

    #[test]
    fn subscribing_makes_a_stream_and_counts_each_topic_once() {
        let mut res = Response::new();
        assert!(res.live.is_none());
        res.subscribe("a").unwrap();
        res.subscribe("a").unwrap();
        res.send_event(event(None, None, b"hi").unwrap());
        let stream = res.live.as_ref().unwrap().events.as_ref().unwrap();
        assert_eq!(stream.topics, vec!["a"]);
        assert_eq!(stream.first.len(), 1);
        assert!(res.subscribe("").is_err());
        for i in 1..MAX_TOPICS {
            res.subscribe(&format!("t{i}")).unwrap();
        }
        assert!(res.subscribe("one-more").unwrap_err().contains("at most"));
    }
}
