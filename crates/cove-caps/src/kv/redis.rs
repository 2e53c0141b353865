//! The Redis backend: one database shared by every process of a deployment.
//!
//! Keys are stored as `cove:kv:<key>`, so the app's keys do not collide
//! with other users of the database. Each value is one Redis string whose
//! first byte tells its type, so it comes back as the type it went in as:
//!
//! | value   | stored as                                    | example     |
//! |---------|----------------------------------------------|-------------|
//! | integer | its decimal digits, bare                     | `42`, `-7`  |
//! | string  | `s` then its bytes                           | `shello`    |
//! | float   | `d` then its shortest round-trip decimal     | `d1.5`      |
//! | boolean | `b1` or `b0`                                 | `b1`        |
//!
//! Integers carry no tag so that `INCRBY` works on them as they are: Redis
//! does the 64-bit arithmetic and overflow check exactly (numbers inside a
//! Redis Lua script are doubles), and refuses a tagged (non-integer) value.
//! A value no tag explains was written by something else: reading it fails
//! with [`KvError::Foreign`].
//!
//! TTLs are sent as `PX` milliseconds, rounded up (a ttl under 1 ms still
//! expires rather than failing). [`super::MAX_KEYS`] does not apply here:
//! Redis' own `maxmemory` bounds the store.
//!
//! Commands are sent on a `ConnectionManager` (one multiplexed connection,
//! re-established after Redis restarts) driven on the `cove-io` thread
//! ([`cove_core::io`]), speaking RESP3 (Redis 6 or later) unless the URL says
//! `?protocol=resp2`: over RESP3 a dropped connection is noticed and
//! replaced at once, so the first call after a Redis restart succeeds.
//! Each call spawns its command there and returns the
//! task's handle as its future, so the worker waits on a channel, never on
//! the socket. A call that gets no reply within [`TIMEOUT`] fails with
//! [`KvError::Unavailable`], as does every call while Redis is down (at
//! once: the connection is tried again on each call, without backoff). A
//! write whose connection broke after it was sent may or may not have been
//! applied; it is not sent again.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{cmd, Client, Cmd, IntoConnectionInfo, ProtocolVersion, RedisError, Script};

use super::{KvError, KvFuture, KvOut, KvValue, Op};
use cove_core::{io, redact_url as redact};

/// Put before every key.
pub(super) const PREFIX: &str = "cove:kv:";

/// How long one call may wait for Redis (or for a connection to it).
pub(super) const TIMEOUT: Duration = Duration::from_secs(2);

/// `incr`: KEYS[1] the key, ARGV[1] the step, ARGV[2] the ttl in ms (0: none).
/// Atomic, so the ttl is given exactly when this call creates the key.
const INCR: &str = r#"
if ARGV[2] ~= '0' then
  redis.call('SET', KEYS[1], '0', 'NX', 'PX', ARGV[2])
end
redis.call('INCRBY', KEYS[1], ARGV[1])
-- Read back as text: INCRBY's reply became a double in Lua.
return redis.call('GET', KEYS[1])
"#;

/// Why [`manager`] did not connect.
pub(crate) enum Connect {
    Redis(RedisError),
    /// No connection and PING reply within [`TIMEOUT`].
    NoReply,
    /// The I/O thread's task failed.
    Task(String),
}

/// A `ConnectionManager` for `client` made on the I/O thread, its first
/// PING answered: one attempt per (re)connection, each bounded, so while
/// Redis is down a call fails at once instead of waiting out a backoff.
/// The kv store and pub/sub (`crate::pubsub`) each make theirs here.
pub(crate) fn manager(client: Client) -> Result<ConnectionManager, Connect> {
    let config = ConnectionManagerConfig::new()
        .set_number_of_retries(0)
        .set_connection_timeout(TIMEOUT)
        .set_response_timeout(TIMEOUT);
    let task = io::runtime().spawn(async move {
        let connect = async {
            let mut conn = ConnectionManager::new_with_config(client, config).await?;
            cmd("PING").query_async::<()>(&mut conn).await?;
            Ok::<_, RedisError>(conn)
        };
        tokio::time::timeout(TIMEOUT, connect).await
    });
    match cove_core::block_on(task) {
        Ok(Ok(Ok(conn))) => Ok(conn),
        Ok(Ok(Err(e))) => Err(Connect::Redis(e)),
        Ok(Err(_)) => Err(Connect::NoReply),
        Err(e) => Err(Connect::Task(e.to_string())),
    }
}

pub(super) struct RedisStore {
    conn: ConnectionManager,
    /// The URL without its password, for messages.
    url: Arc<str>,
    incr: Script,
}

impl RedisStore {
    /// Connect and PING, so a wrong URL or a stopped server fails now.
    pub(super) fn connect(url: &str) -> Result<RedisStore, String> {
        let shown = redact(url);
        let client = client(url, &shown)?;
        let failed = |why: String| format!("cannot connect to Redis at {shown}: {why}");
        let conn = match manager(client) {
            Ok(conn) => conn,
            Err(Connect::Redis(e)) => return Err(failed(format!("{}{}", reason(&e), hint(&e)))),
            Err(Connect::NoReply) => return Err(failed(no_reply() + "; is the host reachable?")),
            Err(Connect::Task(e)) => return Err(failed(e)),
        };
        Ok(RedisStore {
            conn,
            url: shown.into(),
            incr: Script::new(INCR),
        })
    }

    pub(super) fn url(&self) -> &str {
        &self.url
    }

    /// Send `op` from the I/O thread; the future is its reply.
    pub(super) fn start(self: &Arc<Self>, op: Op<&str>) -> KvFuture<KvError> {
        let this = Arc::clone(self);
        let op = op.owned();
        let task = io::runtime().spawn(async move {
            match tokio::time::timeout(TIMEOUT, this.exec(op)).await {
                Ok(out) => out,
                Err(_) => Err(this.unavailable(no_reply())),
            }
        });
        let url = Arc::clone(&self.url);
        Box::pin(async move {
            task.await.unwrap_or_else(|e| {
                Err(KvError::Unavailable {
                    url: url.to_string(),
                    reason: format!("the I/O task failed: {e}"),
                })
            })
        })
    }

    async fn exec(&self, op: Op<String>) -> Result<KvOut, KvError> {
        let key = format!("{PREFIX}{}", op.key());
        let failed = |e: RedisError| self.failed(op.key(), e);
        match &op {
            Op::Get(k) => {
                let raw: Option<Vec<u8>> =
                    self.query(cmd("GET").arg(&key)).await.map_err(failed)?;
                let value = raw.map(|raw| decode(&raw).ok_or_else(|| KvError::Foreign(k.clone())));
                Ok(KvOut::Value(value.transpose()?))
            }
            Op::Set(_, value, ttl) => {
                let set = put(&key, value, *ttl, false);
                self.query::<()>(&set).await.map_err(failed)?;
                Ok(KvOut::Nothing)
            }
            Op::Add(_, value, ttl) => {
                let add = put(&key, value, *ttl, true);
                // OK when set, nil when the key was there.
                let done: Option<String> = self.query(&add).await.map_err(failed)?;
                Ok(KvOut::Bool(done.is_some()))
            }
            // Without a ttl a plain INCRBY does it (its errors are the
            // script's), one round trip with no script to run.
            Op::Incr(_, by, None) => {
                let n: i64 = self
                    .query(cmd("INCRBY").arg(&key).arg(by))
                    .await
                    .map_err(failed)?;
                Ok(KvOut::Int(n))
            }
            Op::Incr(k, by, ttl) => {
                let mut call = self.incr.prepare_invoke();
                call.key(&key).arg(by).arg(ttl.map_or(0, millis));
                let call = &call;
                let text: String = twice(|| {
                    let mut conn = self.conn.clone();
                    async move { call.invoke_async(&mut conn).await }
                })
                .await
                .map_err(failed)?;
                let n = text.parse().map_err(|_| KvError::Foreign(k.clone()))?;
                Ok(KvOut::Int(n))
            }
            Op::Delete(_) => {
                let removed: i64 = self.query(cmd("DEL").arg(&key)).await.map_err(failed)?;
                Ok(KvOut::Bool(removed > 0))
            }
            Op::Ttl(_) => {
                // -2: no key; -1: no expiry.
                let ms: i64 = self.query(cmd("PTTL").arg(&key)).await.map_err(failed)?;
                Ok(KvOut::Seconds((ms >= 0).then(|| ms as f64 / 1000.0)))
            }
        }
    }

    async fn query<T: ::redis::FromRedisValue>(&self, cmd: &Cmd) -> Result<T, RedisError> {
        twice(|| {
            let mut conn = self.conn.clone();
            async move { cmd.query_async(&mut conn).await }
        })
        .await
    }

    /// What a failed command means for `key`.
    fn failed(&self, key: &str, e: RedisError) -> KvError {
        let text = e.to_string();
        if e.code() == Some("WRONGTYPE") || text.starts_with("WRONGTYPE") {
            KvError::Foreign(key.to_string())
        } else if text.contains("not an integer") {
            KvError::NotInteger(key.to_string())
        } else if text.contains("overflow") {
            KvError::Overflow
        } else if e.is_timeout() {
            // The connection's own response timeout, equal to ours.
            self.unavailable(no_reply())
        } else {
            self.unavailable(reason(&e))
        }
    }

    fn unavailable(&self, reason: String) -> KvError {
        KvError::Unavailable {
            url: self.url.to_string(),
            reason,
        }
    }
}

impl<K: AsRef<str>> Op<K> {
    /// The same op holding its key (to move it to the I/O thread).
    fn owned(self) -> Op<String> {
        let own = |k: K| k.as_ref().to_string();
        match self {
            Op::Get(k) => Op::Get(own(k)),
            Op::Set(k, v, t) => Op::Set(own(k), v, t),
            Op::Add(k, v, t) => Op::Add(own(k), v, t),
            Op::Incr(k, by, t) => Op::Incr(own(k), by, t),
            Op::Delete(k) => Op::Delete(own(k)),
            Op::Ttl(k) => Op::Ttl(own(k)),
        }
    }
}

/// Send, and once more if the connection was refused: then the command
/// was never sent, and the refusal made the manager start a new connection
/// attempt, so the first call after Redis is back succeeds.
async fn twice<T, F, Fut>(send: F) -> Result<T, RedisError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, RedisError>>,
{
    match send().await {
        Err(e) if e.is_connection_refusal() => send().await,
        sent => sent,
    }
}

/// `SET key value [NX] [PX ms]`.
fn put(key: &str, value: &KvValue, ttl: Option<Duration>, only_new: bool) -> Cmd {
    let mut c = cmd("SET");
    c.arg(key).arg(encode(value));
    if only_new {
        c.arg("NX");
    }
    if let Some(t) = ttl {
        c.arg("PX").arg(millis(t));
    }
    c
}

/// Whole milliseconds, rounded up, at least 1.
fn millis(t: Duration) -> u64 {
    let ms = t.as_nanos().div_ceil(1_000_000).max(1);
    u64::try_from(ms).unwrap_or(u64::MAX)
}

pub(super) fn encode(value: &KvValue) -> Vec<u8> {
    match value {
        KvValue::Int(n) => itoa::Buffer::new().format(*n).as_bytes().to_vec(),
        KvValue::Str(s) => {
            let mut out = Vec::with_capacity(1 + s.len());
            out.push(b's');
            out.extend_from_slice(s);
            out
        }
        KvValue::Float(f) => {
            let mut out = b"d".to_vec();
            out.extend_from_slice(ryu::Buffer::new().format(*f).as_bytes());
            out
        }
        KvValue::Bool(b) => if *b { b"b1" } else { b"b0" }.to_vec(),
    }
}

/// The value `raw` encodes; `None` if Cove did not write it.
pub(super) fn decode(raw: &[u8]) -> Option<KvValue> {
    let (tag, rest) = raw.split_first()?;
    let text = || std::str::from_utf8(rest).ok();
    match tag {
        b's' => Some(KvValue::Str(rest.to_vec())),
        b'd' => text()?.parse().ok().map(KvValue::Float),
        b'b' => match rest {
            b"1" => Some(KvValue::Bool(true)),
            b"0" => Some(KvValue::Bool(false)),
            _ => None,
        },
        b'-' | b'0'..=b'9' => std::str::from_utf8(raw)
            .ok()?
            .parse()
            .ok()
            .map(KvValue::Int),
        _ => None,
    }
}

/// A client for `url`, speaking RESP3 unless the URL says otherwise: over
/// RESP3 the manager hears a dropped connection at once and reconnects in
/// the background, so the first call after a Redis restart does not fail.
fn client(url: &str, shown: &str) -> Result<Client, String> {
    let scheme = url.split("://").next().unwrap_or_default();
    match scheme {
        "redis" | "redis+unix" | "unix" => {}
        "rediss" => {
            return Err(format!(
                "cannot connect to Redis at {shown}: TLS (rediss://) is not built in; \
                 reach Redis over a private network or a local TLS tunnel with redis://"
            ))
        }
        _ => {
            return Err(format!(
                "{shown} is not a Redis URL; write redis://host:6379/0 \
                 (or redis://:password@host:6379/0)"
            ))
        }
    }
    let bad = |e: RedisError| format!("bad Redis URL {shown}: {}", reason(&e));
    let mut info = url.into_connection_info().map_err(bad)?;
    if !url.contains("protocol=") {
        info.redis.protocol = ProtocolVersion::RESP3;
    }
    Client::open(info).map_err(bad)
}

fn no_reply() -> String {
    format!("no reply within {} s", TIMEOUT.as_secs())
}

/// `e` as a person reads it: io errors without their `(os error N)` and
/// without the manager's "Reconnecting failed" (a refusal is a refusal).
fn reason(e: &RedisError) -> String {
    let text = e.to_string();
    let text = text.strip_prefix("Reconnecting failed: ").unwrap_or(&text);
    match text.find(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text.to_string(),
    }
}

/// What to check, after a failed first connection.
fn hint(e: &RedisError) -> &'static str {
    let text = e.to_string();
    if e.is_connection_refusal() {
        "; is redis-server running?"
    } else if e.is_timeout() {
        "; is the host reachable?"
    } else if text.contains("HELLO") {
        "; Redis 6 or later is needed (or add ?protocol=resp2 to the URL)"
    } else if text.contains("WRONGPASS")
        || text.contains("NOAUTH")
        || text.contains("uthentication")
    {
        "; check the password in the URL"
    } else {
        ""
    }
}
