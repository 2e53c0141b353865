//! `hull:app` (Lua global `app`): routes, middleware and the manifest, and
//! the objects every handler gets, `req` ([`REQUEST`]) and `res`
//! (`Response`). Declared with the capability table: the routes,
//! middleware and `app.ws` (crate::routes), `res`'s and `ws`'s methods and
//! `app.publish` (crate::response). Bindings: crates/cove-lua/src/app_api.rs, req.rs,
//! caps.rs; crates/cove-js/src/prelude.js, req.rs, caps.rs.

use super::types::{f, f_opt, Field, TypeDef};
use super::{p, Module, Sig, Ty};

const STRINGS: Ty = Ty::List(&Ty::Str);

const REQUEST_FIELDS: &[Field] = &[
    f(
        "method",
        Ty::Str,
        "the method as sent: \"GET\", \"POST\", …",
    ),
    f(
        "path",
        Ty::Str,
        "the path without the query string, as sent (not percent-decoded)",
    ),
    f(
        "params",
        Ty::Record,
        "the route's :name captures, percent-decoded strings",
    ),
    f(
        "query",
        Ty::Record,
        "the query string parsed into name → value (strings; of a repeated name the last)",
    ),
    f(
        "headers",
        Ty::Record,
        "request headers by lower-case name; repeated ones joined with \", \"",
    ),
    f(
        "body",
        Ty::Opt(&Ty::Str),
        "the whole body, or nil/null when there is none and always in app.use middleware",
    ),
    f(
        "ctx",
        Ty::Record,
        "starts empty; the same table/object for every middleware and the handler of one request",
    ),
];

const REQUEST_METHODS: &[Sig] = &[
    Sig::js_only(
        "header",
        &[p("name", Ty::Str)],
        Ty::Opt(&Ty::Str),
        "case-insensitive lookup in req.headers (undefined when absent)",
    )
    .method(),
    Sig::js_only(
        "toJSON",
        &[],
        Ty::Record,
        "every field but ctx, as JSON.stringify(req) and res.json(req) encode it",
    )
    .method(),
];

const WEBSOCKET_FIELDS: &[Field] = &[
    f(
        "id",
        Ty::Int,
        "the connection's number, unique among the open connections of its worker",
    ),
    f(
        "ctx",
        Ty::Record,
        "the upgrade request's req.ctx (what middleware put there); keep the connection's own state here",
    ),
];

const WS_HANDLER_FIELDS: &[Field] = &[
    f_opt(
        "open",
        Ty::Fn,
        "function(ws, req): the connection is open; req is the upgrade request, after its middleware",
    ),
    f_opt(
        "message",
        Ty::Fn,
        "function(ws, data, is_binary): a whole message; data is a string (JS: a Uint8Array when binary)",
    ),
    f_opt(
        "close",
        Ty::Fn,
        "function(ws, code, reason): the connection has ended (1006 when it broke without a close frame); sends are dropped",
    ),
];

const TYPES: &[TypeDef] = &[
    TypeDef {
        name: "Request",
        doc: "The request (req), passed to every handler and middleware; valid only during its own request",
        fields: REQUEST_FIELDS,
        methods: REQUEST_METHODS,
    },
    TypeDef {
        name: "Response",
        doc: "The response being built (res); the last body method called wins, and nothing is sent until the handler returns",
        fields: &[],
        // From the capability table: sigs_of.
        methods: &[],
    },
    TypeDef {
        name: "Handler",
        doc: "A route handler: function(req, res) / (req, res) => …; its result is ignored (a JS promise is awaited first)",
        fields: &[],
        methods: &[],
    },
    TypeDef {
        name: "Middleware",
        doc: "A middleware: function(req, res) / (req, res) => …; a non-zero number or true stops the request and sends res as it is, anything else goes on (a JS promise is awaited first)",
        fields: &[],
        methods: &[],
    },
    TypeDef {
        name: "WebSocket",
        doc: "One WebSocket connection (ws), given to its endpoint's handlers; usable only inside them (reach other connections with subscribe and app.publish)",
        fields: WEBSOCKET_FIELDS,
        // From the capability table: sigs_of.
        methods: &[],
    },
    TypeDef {
        name: "WebSocketHandlers",
        doc: "The handlers of a WebSocket endpoint, given to app.ws; each optional, each run under the same instruction budget as a request handler; one that fails closes the connection with 1011",
        fields: WS_HANDLER_FIELDS,
        methods: &[],
    },
    TypeDef {
        name: "Manifest",
        doc: "What the app may reach, given to app.manifest; other fields are kept and returned by app.get_manifest",
        fields: &[
            f_opt("env", STRINGS, "the environment variables env.get may read"),
            f_opt(
                "hosts",
                STRINGS,
                "the hosts http and smtp may reach (exact names, no port, no wildcards)",
            ),
            f_opt(
                "csp",
                Ty::Union(&[Ty::Str, Ty::Bool]),
                "the Content-Security-Policy res:html sends; false sends none",
            ),
        ],
        methods: &[],
    },
];

/// The methods of a type (`res`'s, `ws`'s), or with `None` the `app`
/// functions that act on the response (`app.publish`), from their
/// declarations (crate::response).
fn sigs_of(of: Option<&str>) -> Vec<Sig> {
    crate::response::FUNCTIONS
        .iter()
        .filter(|f| f.of == of)
        .map(|f| {
            let sig = Sig::both(f.name, f.params, f.ret, f.doc);
            if f.is_method() {
                sig.method()
            } else {
                sig
            }
        })
        .collect()
}

/// `app.get` … `app.use_post`, or `app.ws`, from their declarations
/// (crate::routes).
fn route_sigs(sockets: bool) -> Vec<Sig> {
    crate::routes::FUNCTIONS
        .iter()
        .filter(|f| f.takes_handlers() == sockets)
        .map(|f| Sig::named(f.lua, f.js, f.params, Ty::Nil, f.doc))
        .collect()
}

/// `app.manifest`, `app.get_manifest`, `app.config` and `app.static`,
/// from their declarations (crate::routes).
fn app_sigs() -> impl Iterator<Item = Sig> {
    crate::routes::APP_FUNCTIONS.iter().map(|f| match f.lua {
        Some(lua) => Sig::named(lua, f.js, f.params, f.returns, f.doc),
        None => Sig::js_only(f.js, f.params, f.returns, f.doc),
    })
}

/// `hull:app`, the Lua global `app`.
pub(super) fn module() -> Module {
    let mut functions = route_sigs(false);
    functions.extend(app_sigs());
    functions.extend(route_sigs(true));
    functions.extend(sigs_of(None));
    let types = TYPES
        .iter()
        .map(|t| match t.name {
            crate::response::RESPONSE | crate::response::WEBSOCKET => TypeDef {
                methods: super::tables::leak(sigs_of(Some(t.name))),
                ..*t
            },
            _ => *t,
        })
        .collect();
    Module {
        js: "hull:app",
        lua_global: Some("app"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc: "Routes, middleware and the manifest; registered while the app file loads",
        functions,
        types: super::tables::leak(types),
    }
}
