//! `hull:time`, `hull:env`, `hull:log` (Lua globals), `hull:template`
//! (Lua `require("hull.template")`, no global) and `hull:smtp` (Lua global).
//! Bindings: time, env, log and smtp through the capability table
//! (crate::cap, each runtime's caps.rs; the functions: crate::time
//! `FUNCTIONS`, cap/log.rs, cap/env.rs, cap/smtp.rs); template by each
//! runtime (crates/cove-lua/src/template.rs, crates/cove-js/src/template.rs).

use super::types::{f, f_opt, TypeDef};
use super::{opt, p, Module, Sig, Ty};

/// `hull:time`, the Lua global `time`.
pub(super) fn time() -> Module {
    Module {
        js: "hull:time",
        lua_global: Some("time"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc: "The current time, in UTC",
        functions: crate::time::FUNCTIONS
            .iter()
            .map(|f| {
                let ret = match f.read {
                    crate::time::Reading::Int(_) => Ty::Int,
                    crate::time::Reading::Text(_) => Ty::Str,
                };
                Sig::named(f.lua, f.js, &[], ret, f.doc)
            })
            .collect(),
        types: &[],
    }
}

const ENV_FUNCTIONS: &[Sig] = &[Sig::both(
    "get",
    &[p("name", Ty::Str)],
    Ty::Opt(&Ty::Str),
    "an environment variable the manifest lists in env, or nil/null when not listed or not set",
)];

/// `hull:env`, the Lua global `env`.
pub(super) fn env() -> Module {
    Module {
        js: "hull:env",
        lua_global: Some("env"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc: "The environment variables the manifest lists",
        functions: ENV_FUNCTIONS.to_vec(),
        types: &[],
    }
}

/// Any number of values: `...` (LuaLS `---@param ... any`, TS `...args`).
const VALUES: &[super::Param] = &[opt("...", Ty::Any)];

/// `hull:log`, the Lua global `log`.
pub(super) fn log() -> Module {
    Module {
        js: "hull:log",
        lua_global: Some("log"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc: "Log lines to stderr, tagged [app] (JS: console.log/info/debug/warn/error write the same)",
        functions: crate::log::FUNCTIONS
            .iter()
            .map(|&(name, _, doc)| Sig::both(name, VALUES, Ty::Nil, doc))
            .collect(),
        types: &[],
    }
}

const TEMPLATE_FUNCTIONS: &[Sig] = &[
    Sig::both(
        "render",
        &[p("name", Ty::Str), opt("data", Ty::Record)],
        Ty::Str,
        "render templates/<name> with data (parsed on first use, cached per worker)",
    ),
    Sig::named(
        "render_string",
        "renderString",
        &[p("source", Ty::Str), opt("data", Ty::Record)],
        Ty::Str,
        "compile the source (not cached) and render it with data",
    ),
    Sig::both(
        "compile",
        &[p("name", Ty::Str)],
        Ty::Fn,
        "parse and cache templates/<name> now; a function that renders it with data",
    ),
    Sig::named(
        "clear_cache",
        "clearCache",
        &[],
        Ty::Nil,
        "forget this worker's compiled templates",
    ),
];

/// `hull:template`: Lua `require("hull.template")`, no global.
pub(super) fn template() -> Module {
    Module {
        js: "hull:template",
        lua_global: None,
        lua_require: Some("hull.template"),
        native: true,
        private: false,
        default_export: false,
        doc:
            "Server-side templates from the app's templates/ directory (syntax: docs/templates.md)",
        functions: TEMPLATE_FUNCTIONS.to_vec(),
        types: &[],
    }
}

const SMTP_OPTIONS: Ty = Ty::Named("SmtpOptions");
const SMTP_RESULT: Ty = Ty::Named("SmtpResult");

const SMTP_FUNCTIONS: &[Sig] = &[
    Sig::both(
        "send",
        &[p("options", SMTP_OPTIONS)],
        SMTP_RESULT,
        "send one message through an SMTP server the manifest's hosts list; raises only when smtp is not configured",
    )
    .slow(),
    Sig::js_only(
        "sendAsync",
        &[p("options", SMTP_OPTIONS)],
        Ty::Promise(&SMTP_RESULT),
        "smtp.send as a promise: the worker serves other requests while the message goes out",
    )
    .slow(),
];

const SMTP_TYPES: &[TypeDef] = &[
    TypeDef {
        name: "SmtpOptions",
        doc: "The message and the server to send it through",
        fields: &[
            f(
                "host",
                Ty::Str,
                "the SMTP server; must be in the manifest's hosts",
            ),
            f_opt("port", Ty::Int, "default 587"),
            f_opt(
                "tls",
                Ty::Union(&[Ty::Bool, Ty::Int]),
                "false/0 (default): plain text; true/1: STARTTLS (required); 2: TLS from the start",
            ),
            f_opt("username", Ty::Str, "AUTH user (refused over plain text)"),
            f_opt("password", Ty::Str, "AUTH password"),
            f("from", Ty::Str, "the sender; may be \"Name <a@b.c>\""),
            f(
                "to",
                Ty::Str,
                "the recipient; a comma-separated list for several",
            ),
            f("subject", Ty::Str, "the subject"),
            f("body", Ty::Str, "the body"),
            f_opt("cc", Ty::List(&Ty::Str), "addresses to copy"),
            f_opt("reply_to", Ty::Str, "a Reply-To address"),
            f_opt(
                "content_type",
                Ty::Str,
                "default text/plain (\"; charset=utf-8\" is added)",
            ),
        ],
        methods: &[],
    },
    TypeDef {
        name: "SmtpResult",
        doc: "The outcome of a send",
        fields: &[
            f("ok", Ty::Bool, "whether the server accepted the message"),
            f_opt(
                "error",
                Ty::Str,
                "why not: \"body required\", \"smtp send failed: <reason>\"",
            ),
        ],
        methods: &[],
    },
];

/// `hull:smtp`, the Lua global `smtp`.
pub(super) fn smtp() -> Module {
    Module {
        js: "hull:smtp",
        lua_global: Some("smtp"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc:
            "Outbound email over SMTP to the hosts the manifest lists (not configured in cove test)",
        functions: SMTP_FUNCTIONS.to_vec(),
        types: SMTP_TYPES,
    }
}
