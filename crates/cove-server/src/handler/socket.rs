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
    log, run_main, App, Engine, Exchange, HandlerId, Plan, Request, Target, WsApp, WsCommand,
    WsConn, WsEvent, WsFuture,
};

use super::{drive, ScriptHandler};
use crate::convert::{to_http, HttpResponse};

/// Close code for an event whose handler failed, or whose writes did not
/// commit (RFC 6455: "an unexpected condition").
const INTERNAL_ERROR: u16 = 1011;

type State<A> = <<A as App>::Engine as Engine>::State;

/// One connection's side of the app: the endpoint's handler, and, until
/// the connection opens, the state its upgrade request's middleware left
/// (so `open` sees the same `req`, its `ctx` included).
struct ScriptSocket<A: App + 'static> {
    handler: Rc<ScriptHandler<A>>,
    route: HandlerId,
    upgrade_state: RefCell<Option<State<A>>>,
}

impl<A: App + 'static> WsApp for ScriptSocket<A>
where
    State<A>: 'static,
{
    fn event<'a>(&'a self, conn: &'a WsConn, event: WsEvent) -> WsFuture<'a> {
        let state = self.upgrade_state.borrow_mut().take();
        Box::pin(self.handler.socket_event(self.route, conn, event, state))
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
            return self.finish(ex);
        };
        let app = Rc::new(ScriptSocket {
            handler: self.clone(),
            route: handler,
            upgrade_state: RefCell::new(Some(state)),
        });
        let request = std::mem::take(&mut ex.req);
        let mut res = self.sockets.upgrade(parts, request, app);
        for (name, value) in std::mem::take(&mut ex.res.headers) {
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

    /// Run `event` of `conn` through the endpoint's handler `route`; the
    /// commands it gave, once its writes are committed, followed by what
    /// it published. A failure (or writes that did not commit) closes the
    /// connection with 1011 instead, and is logged with its reason.
    async fn socket_event(
        self: &Rc<Self>,
        route: HandlerId,
        conn: &WsConn,
        event: WsEvent,
        state: Option<State<A>>,
    ) -> Vec<WsCommand> {
        let kind = match event {
            WsEvent::Open => "open",
            WsEvent::Message { .. } => "message",
            WsEvent::Close { .. } => "close",
        };
        // Only `open` is given the request.
        let req = match event {
            WsEvent::Open => conn.request.clone(),
            _ => Request::default(),
        };
        let plan = Plan {
            target: Target::Socket {
                handler: route,
                params: Vec::new(),
            },
            pre: Vec::new(),
            post: Vec::new(),
        };
        let mut ex = Exchange::new(req, plan);
        ex.res.start_socket_turn(conn.id, event);
        if audit::enabled() {
            ex.audit = Some(RequestScope::new());
        }
        let mut state = state.unwrap_or_default();
        let engine = self.app.engine();
        drive(engine, &mut ex, &mut state, run_main, || {
            self.schedule_commit()
        })
        .await;
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
        let live = ex.res.live.take().map(|l| *l).unwrap_or_default();
        if !ex.errors.is_empty() || !committed {
            return match kind {
                "close" => Vec::new(),
                _ => vec![WsCommand::Close {
                    code: INTERNAL_ERROR,
                    reason: "internal error".into(),
                }],
            };
        }
        let mut commands = live.socket.map(|t| t.commands).unwrap_or_default();
        commands.extend(live.outbox.into_iter().map(WsCommand::Publish));
        commands
    }
}
