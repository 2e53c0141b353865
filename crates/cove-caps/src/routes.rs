//! What `app.get`, `app.post`, …, `app.use`/`app.use_post` and `app.ws`
//! register (Hull §3.1; docs/protocols.md), and `app`'s other functions
//! (the manifest, Hull §11.2; [`APP_FUNCTIONS`]): declared once for the
//! capability table ([`crate::cap`], whose adapter cap/routes.rs checks the
//! arguments and adds the handler to the app's
//! [`Registry`](crate::Registry)) and the API catalog (api/app.rs). The handler is the one argument no [`CapValue`] carries:
//! each binding hands it over as its own function handle (for `app.ws`, the
//! function its prelude makes of the handlers to dispatch a connection's
//! events).
//!
//! [`CapValue`]: crate::cap::CapValue

use cove_core::Phase;

use crate::sig::{p, Param, Ty};

/// What a function registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registers {
    /// A route for this method (`GET` also answers `HEAD`).
    Route(&'static str),
    /// A middleware of this phase, for the method and pattern given.
    Middleware(Phase),
    /// A WebSocket endpoint (`app.ws`): the argument is a table of
    /// handlers ([`WS_HANDLERS`]), made into one dispatcher by the binding.
    Socket,
}

/// The handlers `app.ws` takes, each optional.
pub const WS_HANDLERS: &[&str] = &["open", "message", "close"];

/// One function of `app` that registers a handler while the app loads.
pub struct RouteFn {
    pub lua: &'static str,
    pub js: &'static str,
    pub registers: Registers,
    pub params: &'static [Param],
    pub doc: &'static str,
}

impl RouteFn {
    /// The argument (from 0) that is the handler: after the pattern, or
    /// after the method and the pattern.
    pub fn handler_arg(&self) -> usize {
        self.params.len() - 1
    }

    /// What the handler is called in messages (`the handler`, `the
    /// middleware`).
    pub fn handler_name(&self) -> &'static str {
        self.params[self.handler_arg()].name
    }

    /// The handler argument is a table of handlers (`app.ws`), not a
    /// function.
    pub fn takes_handlers(&self) -> bool {
        self.registers == Registers::Socket
    }
}

const HANDLER: Ty = Ty::Named("Handler");
const MIDDLEWARE: Ty = Ty::Named("Middleware");
const ROUTE: &[Param] = &[p("pattern", Ty::Str), p("handler", HANDLER)];
const MIDDLEWARE_PARAMS: &[Param] = &[
    p("method", Ty::Str),
    p("pattern", Ty::Str),
    p("middleware", MIDDLEWARE),
];

const fn route(name: &'static str, method: &'static str, doc: &'static str) -> RouteFn {
    RouteFn {
        lua: name,
        js: name,
        registers: Registers::Route(method),
        params: ROUTE,
        doc,
    }
}

/// In the catalog's order.
pub const FUNCTIONS: &[RouteFn] = &[
    route(
        "get",
        "GET",
        "register a handler for GET (and HEAD) requests whose path matches the pattern",
    ),
    route(
        "post",
        "POST",
        "register a handler for POST requests whose path matches the pattern",
    ),
    route(
        "put",
        "PUT",
        "register a handler for PUT requests whose path matches the pattern",
    ),
    route(
        "patch",
        "PATCH",
        "register a handler for PATCH requests whose path matches the pattern",
    ),
    route(
        "delete",
        "DELETE",
        "register a handler for DELETE requests whose path matches the pattern",
    ),
    route("del", "DELETE", "Hull's name for app.delete"),
    route(
        "options",
        "OPTIONS",
        "register a handler for OPTIONS requests whose path matches the pattern",
    ),
    RouteFn {
        lua: "use",
        js: "use",
        registers: Registers::Middleware(Phase::Pre),
        params: MIDDLEWARE_PARAMS,
        doc: "register a pre-body middleware (runs before the body is read) for a method (\"*\": any) and an exact path or a \"/prefix/*\"",
    },
    RouteFn {
        lua: "use_post",
        js: "usePost",
        registers: Registers::Middleware(Phase::Post),
        params: MIDDLEWARE_PARAMS,
        doc: "register a post-body middleware (runs after the body is read, just before the handler)",
    },
    RouteFn {
        lua: "ws",
        js: "ws",
        registers: Registers::Socket,
        params: &[
            p("pattern", Ty::Str),
            p("handlers", Ty::Named("WebSocketHandlers")),
        ],
        doc: "register a WebSocket endpoint: GET requests to the pattern upgrade once the middleware has run, and each event of a connection calls one of the handlers on the worker that holds it",
    },
];

/// What one of `app`'s other functions does, on the app's
/// [`Registry`](crate::Registry) (the adapter: cap/routes.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppOp {
    /// `app.manifest(m)`: declare what the app may reach.
    Manifest,
    /// `app.get_manifest()`: the manifest as it was declared (as JSON
    /// holds it), or nil/undefined.
    GetManifest,
    /// Hull's `app.config` and JS's `app.static`: taken, and nothing done
    /// (Hull stores what nothing reads).
    Accept,
}

/// One of `app`'s functions that registers no handler.
pub struct AppFn {
    /// `None`: JS only.
    pub lua: Option<&'static str>,
    pub js: &'static str,
    pub op: AppOp,
    pub params: &'static [Param],
    pub returns: Ty,
    pub doc: &'static str,
}

const MANIFEST: Ty = Ty::Named("Manifest");

/// In the catalog's order: after the routes and middleware, before `app.ws`.
pub const APP_FUNCTIONS: &[AppFn] = &[
    AppFn {
        lua: Some("manifest"),
        js: "manifest",
        op: AppOp::Manifest,
        params: &[p("manifest", MANIFEST)],
        returns: Ty::Nil,
        doc: "declare what the app may reach (env variables, outbound hosts, CSP); once, while the app loads",
    },
    AppFn {
        lua: Some("get_manifest"),
        js: "getManifest",
        op: AppOp::GetManifest,
        params: &[],
        returns: Ty::Opt(&MANIFEST),
        doc: "the value given to app.manifest, or nil/undefined when there was none",
    },
    AppFn {
        lua: Some("config"),
        js: "config",
        op: AppOp::Accept,
        params: &[p("value", Ty::Any)],
        returns: Ty::Nil,
        doc: "accepted for Hull apps; does nothing observable",
    },
    AppFn {
        lua: None,
        js: "static",
        op: AppOp::Accept,
        params: &[p("prefix", Ty::Str), p("dir", Ty::Str)],
        returns: Ty::Nil,
        doc: "accepted for Hull apps; does nothing (files under static/ are served at /static/* anyway)",
    },
];
