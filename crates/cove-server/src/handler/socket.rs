//! WebSocket endpoints (`app.ws`): the upgrade of a request whose
//! middleware let it through, and each event of its connection run as an
//! exchange of the endpoint's handler on this worker's VM, under the same
//! budget and heap cap as a request, its writes committed before what it
//! asked for (sends, publishes) is done.

use std::cell::RefCell;
use std::rc::Rc;

use hyper::header::{HeaderName, HeaderValue};
use hyper::http::request::Parts;

use cove_core::audit::{self, RequestScope};
use cove_core::{
    log, run_main, App, Engine, Exchange, HandlerId, Plan, Target, WsApp, WsCommand, WsConn,
    WsEvent, WsFuture,
};

use super::{drive, ScriptHandler};
use crate::convert::{to_http, HttpResponse};

/// Close code for an event whose handler failed, or whose writes did not
/// commit (RFC 6455: "an unexpected condition").
const INTERNAL_ERROR: u16 = 1011;

type State<A> = <<A as App>::Engine as Engine>::State;

/// One connection's side of the app: the endpoint's handler, and the
/// upgrade request's exchange with the script state its middleware left,
/// which every event of the connection runs with. So `open` sees the same
/// `req` (its `ctx` included), the engines make no new `req` for each
/// message, and a `req` a handler kept stays readable for the connection's
/// life.
struct ScriptSocket<A: App + 'static> {
    handler: Rc<ScriptHandler<A>>,
    route: HandlerId,
    /// Between events; `None` while one runs (events never overlap), and
    /// after one whose future was dropped (the connection ended mid-event).
    held: RefCell<Option<Box<Held<A>>>>,
}

/// The exchange every event runs in (the upgrade request's head, the
/// endpoint as its target), and the request's script state. Boxed: an
/// event's future holds a pointer, not the 528-byte exchange.
struct Held<A: App> {
    ex: Exchange,
    state: State<A>,
}

impl<A: App + 'static> WsApp for ScriptSocket<A>
where
    State<A>: 'static,
{
    fn event<'a>(&'a self, conn: &'a WsConn, event: WsEvent) -> WsFuture<'a> {
        // The handler's future itself, not one wrapping it: a wrapper
        // moved it into its own state (~900 instructions of memcpy a
        // message).
        Box::pin(
            self.handler
                .socket_event(self.route, conn, event, &self.held),
        )
    }
}

impl<A: App + 'static> ScriptHandler<A>
where
    State<A>: 'static,
{
    /// A request for a WebSocket endpoint, past its middleware: once the
    /// middleware's writes are committed, the upgrade (101 with the
    /// headers the middleware set, such as a session cookie), or the
    /// handshake's refusal.
    #[cold]
    pub(super) async fn upgrade(
        self: &Rc<Self>,
        parts: &mut Parts,
        mut ex: Exchange,
        state: State<A>,
    ) -> HttpResponse {
        if let Some(group) = ex.turn.touched {
            self.schedule_commit();
            if !self.committed(group).await {
                return to_http(super::uncommitted());
            }
        }
        let Target::Socket { handler, .. } = ex.plan.target else {
            return self.finish(&mut ex);
        };
        let request = ex.req.clone();
        let headers = std::mem::take(&mut ex.res.headers);
        ex.plan = socket_plan(handler);
        let app = Rc::new(ScriptSocket {
            handler: self.clone(),
            route: handler,
            held: RefCell::new(Some(Box::new(Held { ex, state }))),
        });
        let mut res = self.sockets.upgrade(parts, request, app);
        for (name, value) in headers {
            let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(&value),
            ) else {
                continue; // checked when the script set it
            };
            res.headers_mut().append(name, value);
        }
        res
    }

    /// Run `event` of `conn` through the endpoint's handler, in the
    /// exchange and with the state in `held` (the upgrade's, put back
    /// after); the commands it gave, once its writes are committed,
    /// followed by what it published. A failure (or writes that did not
    /// commit) closes the connection with 1011 instead, and is logged with
    /// its reason.
    async fn socket_event(
        self: &Rc<Self>,
        route: HandlerId,
        conn: &WsConn,
        event: WsEvent,
        cell: &RefCell<Option<Box<Held<A>>>>,
    ) -> Vec<WsCommand> {
        let kind = match event {
            WsEvent::Open => "open",
            WsEvent::Message { .. } => "message",
            WsEvent::Close { .. } => "close",
        };
        let taken = cell.borrow_mut().take();
        let mut held = taken.unwrap_or_else(|| {
            Box::new(Held {
                ex: Exchange::new(conn.request.clone(), socket_plan(route)),
                state: Default::default(),
            })
        });
        let Held { ex, state } = &mut *held;
        ex.next_event(conn.id, event);
        if audit::enabled() {
            ex.audit = Some(RequestScope::new());
        }
        let engine = self.app.engine();
        drive(engine, ex, state, run_main, || self.schedule_commit()).await;
        if ex.turn.left_open {
            self.schedule_commit();
        }
        let committed = match ex.turn.touched {
            None => true,
            Some(group) => {
                self.schedule_commit();
                self.committed(group).await
            }
        };
        let path = &conn.request.path;
        for err in &ex.errors {
            log::error(&format!("ws {path} {kind}: {err}"));
        }
        if !committed {
            log::error(&format!(
                "ws {path} {kind}: its writes did not commit; closing the connection with {INTERNAL_ERROR}"
            ));
        }
        let failed = !ex.errors.is_empty() || !committed;
        let (mut commands, outbox) = match ex.res.live.as_deref_mut() {
            Some(live) => (
                live.socket.take().map(|t| t.commands).unwrap_or_default(),
                std::mem::take(&mut live.outbox),
            ),
            None => Default::default(),
        };
        *cell.borrow_mut() = Some(held);
        if failed {
            return match kind {
                "close" => Vec::new(),
                _ => vec![WsCommand::Close {
                    code: INTERNAL_ERROR,
                    reason: "internal error".into(),
                }],
            };
        }
        commands.extend(outbox.into_iter().map(WsCommand::Publish));
        commands
    }
}

/// What every event of a connection runs: its endpoint's handler alone.
fn socket_plan(handler: HandlerId) -> Plan {
    Plan {
        target: Target::Socket {
            handler,
            params: Vec::new(),
        },
        pre: Vec::new(),
        post: Vec::new(),
    }
}
