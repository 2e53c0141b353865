//! Pub/sub across processes on Redis: every hub publishes on one channel
//! and subscribes to it. A message travels as
//! `origin (8 bytes) · binary (1) · topic length (2) · topic · data`, so a
//! hub knows (and skips) its own.
//!
//! Publishing uses a `ConnectionManager` (reconnected after a Redis
//! restart); the subscription runs on the `cove-io` thread and is made
//! again after a lost connection, a second later, then up to every 30 s.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use ::redis::aio::ConnectionManager;
use ::redis::{cmd, Client, RedisError};
use bytes::Bytes;
use futures_util::StreamExt;

use super::{Inner, Message};
use crate::kv::redis::{manager, Connect};
use cove_core::{io, log, redact_url as redact};

/// The Redis channel every Cove process of a deployment shares.
pub const CHANNEL: &str = "cove:pubsub";

const TIMEOUT: Duration = Duration::from_secs(2);

pub(super) struct Bus {
    client: Client,
    conn: ConnectionManager,
    url: Arc<str>,
    origin: u64,
    /// A publish failed and nothing has succeeded since: said once.
    failing: Arc<AtomicBool>,
}

impl Bus {
    /// Connect and PING, so a wrong URL fails at start.
    pub(super) fn connect(url: &str) -> Result<Bus, String> {
        let shown: Arc<str> = redact(url).into();
        let failed = |why: String| format!("cannot connect to Redis at {shown} for pub/sub: {why}");
        let client = Client::open(url).map_err(|e| failed(e.to_string()))?;
        let conn = match manager(client.clone()) {
            Ok(conn) => conn,
            Err(Connect::Redis(e)) => return Err(failed(e.to_string())),
            Err(Connect::NoReply) => return Err(failed("no reply within 2 s".into())),
            Err(Connect::Task(e)) => return Err(failed(e)),
        };
        let mut origin = [0u8; 8];
        getrandom::getrandom(&mut origin).map_err(|e| failed(e.to_string()))?;
        Ok(Bus {
            client,
            conn,
            url: shown,
            origin: u64::from_be_bytes(origin),
            failing: Arc::new(AtomicBool::new(false)),
        })
    }

    pub(super) fn url(&self) -> &str {
        &self.url
    }

    /// Publish on the I/O thread; a failure is logged (once a streak).
    pub(super) fn publish(&self, message: &Message) {
        let payload = encode(self.origin, message);
        let mut conn = self.conn.clone();
        let (failing, url) = (self.failing.clone(), self.url.clone());
        io::runtime().spawn(async move {
            let sent = tokio::time::timeout(
                TIMEOUT,
                cmd("PUBLISH")
                    .arg(CHANNEL)
                    .arg(&payload[..])
                    .query_async::<i64>(&mut conn),
            )
            .await;
            match sent {
                Ok(Ok(_)) => failing.store(false, Ordering::Relaxed),
                Ok(Err(e)) if !failing.swap(true, Ordering::Relaxed) => log::warn(&format!(
                    "pub/sub: cannot publish on Redis at {url} ({e}); messages reach this process only until it answers"
                )),
                Err(_) if !failing.swap(true, Ordering::Relaxed) => log::warn(&format!(
                    "pub/sub: Redis at {url} did not answer; messages reach this process only until it does"
                )),
                _ => {}
            }
        });
    }

    /// Subscribe to [`CHANNEL`] on the I/O thread and hand other
    /// processes' messages to `hub`, until it is dropped.
    pub(super) fn forward_into(&self, hub: Weak<Inner>) {
        let (client, origin, url) = (self.client.clone(), self.origin, self.url.clone());
        io::runtime().spawn(async move {
            let mut wait = Duration::from_secs(1);
            loop {
                match subscribe(&client, origin, &hub).await {
                    Ok(()) => return, // the hub is gone
                    Err(e) => log::warn(&format!(
                        "pub/sub: lost the Redis subscription at {url} ({e}); retrying in {} s",
                        wait.as_secs()
                    )),
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(30));
                if hub.strong_count() == 0 {
                    return;
                }
            }
        });
    }
}

/// Forward messages until the hub is gone (`Ok`) or the connection fails.
async fn subscribe(client: &Client, origin: u64, hub: &Weak<Inner>) -> Result<(), RedisError> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(CHANNEL).await?;
    let mut messages = pubsub.on_message();
    while let Some(msg) = messages.next().await {
        let Some(hub) = hub.upgrade() else {
            return Ok(());
        };
        if let Some((from, message)) = decode(msg.get_payload_bytes()) {
            if from != origin {
                hub.deliver(message);
            }
        }
    }
    Err(RedisError::from(std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "the subscription ended",
    )))
}

fn encode(origin: u64, m: &Message) -> Vec<u8> {
    let mut out = Vec::with_capacity(11 + m.topic.len() + m.data.len());
    out.extend_from_slice(&origin.to_be_bytes());
    out.push(u8::from(m.binary));
    // Topics are at most MAX_TOPIC (256) bytes.
    out.extend_from_slice(&(m.topic.len() as u16).to_be_bytes());
    out.extend_from_slice(m.topic.as_bytes());
    out.extend_from_slice(&m.data);
    out
}

/// A message another Cove published; `None` for anything else.
fn decode(raw: &[u8]) -> Option<(u64, Message)> {
    let origin = u64::from_be_bytes(raw.get(..8)?.try_into().ok()?);
    let binary = *raw.get(8)? == 1;
    let len = usize::from(u16::from_be_bytes(raw.get(9..11)?.try_into().ok()?));
    let topic = std::str::from_utf8(raw.get(11..11 + len)?).ok()?;
    let data = Bytes::copy_from_slice(&raw[11 + len..]);
    Some((origin, Message::new(topic, data, binary)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_foreign_payloads_are_ignored() {
        let m = Message::new("room:1", Bytes::from_static(b"hi \x00 there"), true);
        assert_eq!(decode(&encode(7, &m)), Some((7, m)));
        assert_eq!(decode(b"short"), None);
        assert_eq!(decode(b"\0\0\0\0\0\0\0\x07\x00\x00\x09abc"), None);
    }
}
