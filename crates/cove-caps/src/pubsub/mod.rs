//! Pub/sub: messages published to a topic reach its subscribers on every
//! worker of the process and, with Redis, on every process of a
//! deployment. The transport for WebSocket and Server-Sent Events
//! subscriptions (`app.publish(topic, data)`).
//!
//! Each process has one [`Hub`]. A publish goes at once to a broadcast
//! channel that every worker reads ([`Hub::receiver`]); each worker then
//! hands a message to its own connections subscribed to the topic. With
//! Redis ([`Hub::connect`], the `--kv` URL), the message is also published
//! on the Redis channel [`CHANNEL`], and a task on the I/O thread forwards
//! what other processes published into the broadcast channel; a process
//! skips its own messages there (each hub has a random origin id), so every
//! subscriber gets each message once.
//!
//! Delivery is at most once: a worker that falls more than [`BACKLOG`]
//! messages behind loses the oldest ([`Receiver::recv`] says how many), and
//! messages published while Redis is unreachable reach only this process.

mod redis;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::broadcast;

use cove_core::CapError;

pub use self::redis::CHANNEL;

/// Messages a worker may fall behind by before it loses the oldest.
pub const BACKLOG: usize = 4096;
pub use cove_core::{MAX_MESSAGE, MAX_TOPIC};

/// One published message.
pub use cove_core::Published as Message;

/// The process's pub/sub hub; cheap to clone.
#[derive(Clone)]
pub struct Hub(Arc<Inner>);

struct Inner {
    local: broadcast::Sender<Arc<Message>>,
    redis: Option<redis::Bus>,
    /// Messages published here, and received from other processes.
    published: AtomicU64,
    from_redis: AtomicU64,
}

impl Default for Hub {
    fn default() -> Hub {
        Hub::local()
    }
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("redis", &self.0.redis.as_ref().map(|r| r.url()))
            .finish()
    }
}

impl Hub {
    /// A hub for this process only.
    pub fn local() -> Hub {
        Hub::with(None)
    }

    /// A hub shared with every process connected to the Redis at `url`.
    /// Connects now, so a wrong URL fails at start.
    pub fn connect(url: &str) -> Result<Hub, String> {
        let hub = Hub::with(Some(redis::Bus::connect(url)?));
        if let Some(bus) = &hub.0.redis {
            bus.forward_into(Arc::downgrade(&hub.0));
        }
        Ok(hub)
    }

    fn with(redis: Option<redis::Bus>) -> Hub {
        let (local, _) = broadcast::channel(BACKLOG);
        Hub(Arc::new(Inner {
            local,
            redis,
            published: AtomicU64::new(0),
            from_redis: AtomicU64::new(0),
        }))
    }

    /// Send `data` to every subscriber of `topic`, here and (with Redis)
    /// in every other process. Returns at once.
    pub fn publish(&self, topic: &str, data: Bytes, binary: bool) -> Result<(), CapError> {
        check(topic, &data)?;
        self.send(Message::new(topic, data, binary));
        Ok(())
    }

    /// A checked message, sent.
    fn send(&self, message: Message) {
        let message = Arc::new(message.numbered());
        self.0.published.fetch_add(1, Ordering::Relaxed);
        if let Some(bus) = &self.0.redis {
            bus.publish(&message);
        }
        // No receiver (no worker has subscribed yet) is not an error.
        let _ = self.0.local.send(message);
    }

    /// [`Hub::publish`] as the server calls it for the messages a request
    /// published (checked when the script published them).
    pub fn publisher(&self) -> cove_core::Publisher {
        let hub = self.clone();
        Arc::new(move |message| hub.send(message))
    }

    /// The messages published from now on, for one worker.
    pub fn receiver(&self) -> Receiver {
        Receiver(self.0.local.subscribe())
    }

    /// [`Hub::receiver`] as the server takes it.
    pub fn feed(&self) -> cove_core::Feed {
        self.0.local.subscribe()
    }

    /// Messages published through this hub so far, and received from
    /// other processes.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.0.published.load(Ordering::Relaxed),
            self.0.from_redis.load(Ordering::Relaxed),
        )
    }
}

impl Inner {
    /// A message another process published (the Redis task holds the hub
    /// weakly, and ends once it is dropped).
    fn deliver(&self, message: Message) {
        self.from_redis.fetch_add(1, Ordering::Relaxed);
        let _ = self.local.send(Arc::new(message.numbered()));
    }
}

/// One worker's view of the published messages.
pub struct Receiver(broadcast::Receiver<Arc<Message>>);

/// What [`Receiver::recv`] got.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    Message(Arc<Message>),
    /// The worker fell behind: this many messages were lost.
    Lost(u64),
    /// The hub is gone (the server is stopping).
    Closed,
}

impl Receiver {
    pub async fn recv(&mut self) -> Received {
        match self.0.recv().await {
            Ok(m) => Received::Message(m),
            Err(broadcast::error::RecvError::Lagged(n)) => Received::Lost(n),
            Err(broadcast::error::RecvError::Closed) => Received::Closed,
        }
    }
}

fn check(topic: &str, data: &[u8]) -> Result<(), CapError> {
    cove_core::check_topic(topic).map_err(|e| CapError::new("pubsub.topic", e))?;
    cove_core::check_message(data).map_err(|e| CapError::new("pubsub.size", e))
}
