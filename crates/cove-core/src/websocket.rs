//! WebSocket connections as an app sees them: the events the server hands
//! it, one at a time and in order for each connection, and the commands it
//! answers each event with. The server (cove-server `ws`) owns the socket,
//! its queue, its limits and its subscriptions; the app holds nothing of a
//! connection between two events but what it chooses to keep by
//! [`WsConn::id`].

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

use crate::{check_topic, Published, Request, Response};

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

/// A script's handling of one event: what the server hands the engine on
/// the exchange's response ([`Response::socket_turn`]), and what the
/// handler's `ws` calls ask for ([`Response::socket_command`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketTurn {
    /// The connection the event is for ([`WsConn::id`]).
    pub conn: u64,
    pub event: WsEvent,
    pub commands: Vec<WsCommand>,
}

/// Most commands one event's handler gives (beyond the connection's queue,
/// [`MAX_OUTBOX`](crate::MAX_OUTBOX)-like: a loop that never ends is
/// stopped here, not by the heap).
pub const MAX_COMMANDS: usize = 4096;

/// The refusal of a `ws` call outside its connection's own handlers.
pub const WS_NOT_RUNNING: &str = "this connection's handler is not running: a connection is reached only from its own open, message and close handlers; reach others with ws:subscribe and app.publish (they may be on another worker)";

impl Response {
    /// The event being handled, when this response is a WebSocket event's.
    pub fn socket_turn(&self) -> Option<&SocketTurn> {
        self.live.as_ref()?.socket.as_ref()
    }

    /// Make this the response of `conn`'s event `event`.
    pub fn start_socket_turn(&mut self, conn: u64, event: WsEvent) {
        self.live.get_or_insert_with(Default::default).socket = Some(SocketTurn {
            conn,
            event,
            commands: Vec::new(),
        });
    }

    /// Queue `command` for connection `conn`, which must be the one whose
    /// event is being handled.
    pub fn socket_command(&mut self, conn: u64, command: WsCommand) -> Result<(), String> {
        let turn = self
            .live
            .as_mut()
            .and_then(|l| l.socket.as_mut())
            .filter(|t| t.conn == conn)
            .ok_or(WS_NOT_RUNNING)?;
        if turn.commands.len() >= MAX_COMMANDS {
            return Err(format!(
                "a handler sends at most {MAX_COMMANDS} messages and commands per event"
            ));
        }
        turn.commands.push(command);
        Ok(())
    }
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
    fn commands_go_only_to_the_connection_whose_event_runs() {
        let mut res = Response::new();
        assert!(res.socket_turn().is_none());
        assert_eq!(
            res.socket_command(1, WsCommand::text("x")),
            Err(WS_NOT_RUNNING.into())
        );
        res.start_socket_turn(7, WsEvent::Open);
        assert_eq!(
            res.socket_command(8, WsCommand::text("x")),
            Err(WS_NOT_RUNNING.into())
        );
        res.socket_command(7, WsCommand::text("x")).unwrap();
        let turn = res.socket_turn().unwrap();
        assert_eq!((turn.conn, &turn.event), (7, &WsEvent::Open));
        assert_eq!(turn.commands, [WsCommand::text("x")]);
        for _ in 1..MAX_COMMANDS {
            res.socket_command(7, WsCommand::text("x")).unwrap();
        }
        assert!(res
            .socket_command(7, WsCommand::text("x"))
            .unwrap_err()
            .contains("at most"));
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
