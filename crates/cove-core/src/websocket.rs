//! WebSocket connections as an app sees them: the events the server hands
//! it, one at a time and in order for each connection, and the commands it
//! answers each event with. The server (cove-server `ws`) owns the socket,
//! its queue, its limits and its subscriptions; the app holds nothing of a
//! connection between two events but what it chooses to keep by
//! [`WsConn::id`].

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

use crate::{check_topic, Published, Request};

/// One WebSocket connection, as its events name it.
#[derive(Debug)]
pub struct WsConn {
    /// Unique among the connections of one worker while it is open.
    pub id: u64,
    /// The upgrade request's head (method, path, query, headers and the
    /// route's params); no body.
    pub request: Request,
}

/// What happened on a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsEvent {
    /// The handshake is done; the first event of every connection.
    Open,
    /// A whole message from the client (fragments joined). Text is valid
    /// UTF-8 (checked by the server).
    Message { data: Bytes, binary: bool },
    /// The connection has ended; the last event, given once to every
    /// connection that was opened. `code` is the client's close code, or
    /// the server's when it closed first, or 1006 when the connection
    /// broke without a close frame.
    Close { code: u16, reason: String },
}

/// What the app wants done after an event; applied in order, once the
/// event's handler has returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsCommand {
    /// Queue a message to the client. Text that is not valid UTF-8 is sent
    /// with its bad bytes replaced (U+FFFD).
    Send {
        data: Bytes,
        binary: bool,
    },
    /// Close the connection with this code and reason ([`check_close`]).
    Close {
        code: u16,
        reason: String,
    },
    /// Send this connection what is published to the topic.
    Subscribe(String),
    Unsubscribe(String),
    /// Publish to every subscriber of a topic (event streams and
    /// WebSocket connections of every worker).
    Publish(Published),
}

/// What an app's event handler returns.
pub type WsFuture<'a> = Pin<Box<dyn Future<Output = Vec<WsCommand>> + 'a>>;

/// The app side of WebSocket routes: called on the worker that holds the
/// connection, never twice at once for one connection.
pub trait WsApp: 'static {
    fn event<'a>(&'a self, conn: &'a WsConn, event: WsEvent) -> WsFuture<'a>;
}

/// Longest close reason, in bytes (a close frame's payload is at most 125
/// bytes, two of them the code).
pub const MAX_CLOSE_REASON: usize = 123;

/// Why an app may not close with `code` and `reason`, if it may not: the
/// codes an endpoint may send are 1000-1003, 1007-1014 and 3000-4999
/// (RFC 6455 §7.4; 1004-1006 and 1015 are never sent).
pub fn check_close(code: u16, reason: &str) -> Result<(), String> {
    let allowed = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
    if !allowed {
        return Err(format!(
            "a close code is 1000-1003, 1007-1014 or 3000-4999, got {code}"
        ));
    }
    if reason.len() > MAX_CLOSE_REASON {
        return Err(format!(
            "a close reason is at most {MAX_CLOSE_REASON} bytes (this one has {})",
            reason.len()
        ));
    }
    Ok(())
}

impl WsCommand {
    /// A text message.
    pub fn text(data: impl Into<Bytes>) -> WsCommand {
        WsCommand::Send {
            data: data.into(),
            binary: false,
        }
    }

    /// A subscription, its topic checked as publishing checks it.
    pub fn subscribe(topic: &str) -> Result<WsCommand, String> {
        check_topic(topic)?;
        Ok(WsCommand::Subscribe(topic.to_string()))
    }

    /// A close, its code and reason checked ([`check_close`]).
    pub fn close(code: u16, reason: &str) -> Result<WsCommand, String> {
        check_close(code, reason)?;
        Ok(WsCommand::Close {
            code,
            reason: reason.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sendable_close_codes_are_allowed() {
        for ok in [1000, 1001, 1003, 1008, 1011, 1014, 3000, 4999] {
            assert!(check_close(ok, "bye").is_ok(), "{ok}");
        }
        for bad in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
            assert!(check_close(bad, "").unwrap_err().contains("close code"));
        }
        let long = "x".repeat(MAX_CLOSE_REASON + 1);
        assert!(check_close(1000, &long).unwrap_err().contains("at most"));
        assert!(WsCommand::close(1000, &long[1..]).is_ok());
    }

    #[test]
    fn commands_check_what_they_carry() {
        assert_eq!(
            WsCommand::subscribe("room").unwrap(),
            WsCommand::Subscribe("room".into())
        );
        assert!(WsCommand::subscribe("").is_err());
        assert_eq!(
            WsCommand::text("hi"),
            WsCommand::Send {
                data: Bytes::from_static(b"hi"),
                binary: false
            }
        );
    }
}
