//! The standard library: modules written in each script language
//! (stdlib/js/*.js, stdlib/lua/hull/*.lua), embedded by the build scripts
//! (stdlib/embed.rs): `stdlib/js/middleware/cors.js` is `hull:middleware:cors`
//! (path parts joined with `:`), `stdlib/lua/hull/middleware/cors.lua` is
//! `require("hull.middleware.cors")`. Names, parameters and results are
//! read off those sources; docs/stdlib.md describes the modules.
//!
//! Where the two languages differ: Lua returns several results where JS
//! returns an array (`validate.check`, `transaction.try`/`attempt`,
//! `jwt.verify` on failure); the catalog's result is Lua's first and the
//! doc says the rest, with `js_returns` for the array.

use super::types::{f, f_opt, TypeDef};
use super::{opt, p, Module, Sig, Ty};

const MIDDLEWARE: Ty = Ty::Named("Middleware");
const REQ: Ty = Ty::Named("Request");
const RES: Ty = Ty::Named("Response");
const STRINGS: Ty = Ty::List(&Ty::Str);
/// JS's `[ok, error]` arrays.
const PAIR: Ty = Ty::List(&Ty::Any);

/// A stdlib module an app can load.
fn module(
    js: &'static str,
    lua: &'static str,
    doc: &'static str,
    functions: &[Sig],
    types: &'static [TypeDef],
) -> Module {
    Module {
        js,
        lua_global: None,
        lua_require: Some(lua),
        native: false,
        private: false,
        default_export: false,
        doc,
        functions: functions.to_vec(),
        types,
    }
}

/// Every stdlib module, the private `_tables` last.
pub(super) fn modules() -> Vec<Module> {
    vec![
        module(
            "hull:cookie",
            "hull.cookie",
            "Parse Cookie headers and build Set-Cookie values",
            COOKIE,
            &[],
        ),
        module(
            "hull:form",
            "hull.form",
            "Parse application/x-www-form-urlencoded bodies",
            FORM,
            &[],
        ),
        module(
            "hull:validate",
            "hull.validate",
            "Check input against per-field rules (required, type, min, max, pattern, oneof, email, fn)",
            VALIDATE,
            &[],
        ),
        module("hull:jwt", "hull.jwt", "HS256 JSON Web Tokens", JWT, &[]),
        module(
            "hull:i18n",
            "hull.i18n",
            "Translations and number, date and currency formats; the active locale belongs to the worker",
            I18N,
            &[],
        ),
        Module {
            default_export: true,
            ..module(
                "hull:email",
                "hull.email",
                "Send email through SMTP or an HTTP email API with one set of options",
                EMAIL,
                EMAIL_TYPES,
            )
        },
        module(
            "hull:dialect",
            "hull.dialect",
            "The SQL words that differ between SQLite and PostgreSQL",
            DIALECT,
            DIALECT_TYPES,
        ),
        module(
            "hull:middleware:auth",
            "hull.middleware.auth",
            "Session-cookie and JWT authentication (names, cookies and ctx keys differ by language, as in Hull)",
            AUTH,
            &[],
        ),
        module(
            "hull:middleware:cors",
            "hull.middleware.cors",
            "CORS headers and preflight answers",
            CORS,
            &[],
        ),
        module(
            "hull:middleware:csrf",
            "hull.middleware.csrf",
            "CSRF tokens tied to the request's session",
            CSRF,
            &[],
        ),
        module(
            "hull:middleware:idempotency",
            "hull.middleware.idempotency",
            "Replay the response of a request retried with the same Idempotency-Key",
            IDEMPOTENCY,
            &[],
        ),
        module(
            "hull:middleware:inbox",
            "hull.middleware.inbox",
            "Remember processed message ids so a redelivered message is handled once",
            INBOX,
            &[],
        ),
        module(
            "hull:middleware:logger",
            "hull.middleware.logger",
            "One log line per request, with a request id unique across workers",
            LOGGER,
            &[],
        ),
        module(
            "hull:middleware:outbox",
            "hull.middleware.outbox",
            "The transactional outbox: HTTP messages enqueued with the change they announce, delivered and retried afterwards",
            OUTBOX,
            OUTBOX_TYPES,
        ),
        module(
            "hull:middleware:ratelimit",
            "hull.middleware.ratelimit",
            "Fixed-window rate limiting, counted in the kv store shared by every worker",
            RATELIMIT,
            RATELIMIT_TYPES,
        ),
        module(
            "hull:middleware:session",
            "hull.middleware.session",
            "Server-side sessions stored in the database",
            SESSION,
            &[],
        ),
        module(
            "hull:middleware:transaction",
            "hull.middleware.transaction",
            "db.batch under Hull's names",
            TRANSACTION,
            &[],
        ),
        Module {
            private: true,
            default_export: false,
            ..module(
                "hull:_tables",
                "hull._tables",
                "Creating the stdlib's own _hull_* tables; only stdlib modules may load it",
                TABLES,
                &[],
            )
        },
    ]
}

const COOKIE: &[Sig] = &[
    Sig::both(
        "parse",
        &[p("header", Ty::Opt(&Ty::Str))],
        Ty::Record,
        "the cookies of a Cookie header as name → value (of a repeated name the first; JS strips quotes and decodes %XX); anything but a string gives an empty table",
    ),
    Sig::both(
        "serialize",
        &[p("name", Ty::Str), p("value", Ty::Str), opt("options", Ty::Record)],
        Ty::Str,
        "a Set-Cookie value, by default with Path=/, HttpOnly, Secure, SameSite=Lax (options: Lua path httponly secure samesite max_age domain expires; JS path httpOnly secure sameSite maxAge domain expires; false drops one)",
    ),
    Sig::both(
        "clear",
        &[p("name", Ty::Str), opt("options", Ty::Record)],
        Ty::Str,
        "a Set-Cookie value that deletes the cookie (Max-Age=0); pass the path and domain it was set with",
    ),
];

const FORM: &[Sig] = &[Sig::both(
    "parse",
    &[p("body", Ty::Opt(&Ty::Str))],
    Ty::Record,
    "a form-encoded body as name → value (+ is a space, %XX decoded; of a repeated name the last); anything but a string gives an empty table",
)];

const VALIDATE: &[Sig] = &[Sig::both(
    "check",
    &[p("data", Ty::Any), opt("schema", Ty::Record)],
    Ty::Bool,
    "whether the data passes the schema, and a message per failing field: Lua true, nil or false, errors; JS [true, null] or [false, errors]",
)
.js_returns(PAIR)];

const JWT: &[Sig] = &[
    Sig::both(
        "sign",
        &[p("payload", Ty::Record), p("secret", Ty::Str)],
        Ty::Opt(&Ty::Str),
        "an HS256 token for the payload, iat added unless set (Lua: an exp below 2e9 is relative to now; a missing payload or secret gives nil and the reason, JS throws)",
    )
    .js_returns(Ty::Str),
    Sig::both(
        "verify",
        &[p("token", Ty::Str), p("secret", Ty::Str)],
        Ty::Opt(&Ty::Record),
        "the payload if the token is HS256 signed with the secret and within exp/nbf; else Lua nil and the reason, JS an array [null, reason]",
    )
    .js_returns(Ty::Union(&[Ty::Record, PAIR])),
    Sig::both(
        "decode",
        &[p("token", Ty::Str)],
        Ty::Opt(&Ty::Record),
        "the payload without checking anything (for display, never for trust), or nil/null if malformed",
    ),
];

const I18N: &[Sig] = &[
    Sig::both(
        "load",
        &[p("name", Ty::Str), p("locale", Ty::Record)],
        Ty::Nil,
        "register a locale's table (e.g. a locales/*.json file)",
    ),
    Sig::both(
        "locale",
        &[opt("name", Ty::Str)],
        Ty::Opt(&Ty::Str),
        "set the active locale when given; the active one (initially nil/null)",
    ),
    Sig::both(
        "t",
        &[p("key", Ty::Str), opt("params", Ty::Record), opt("locale", Ty::Str)],
        Ty::Str,
        "the translation of a dotted key in the active (or the given) locale, ${name} filled from params; the key when there is none",
    ),
    Sig::both(
        "number",
        &[p("n", Ty::Num)],
        Ty::Str,
        "the number with the locale's separators (fractions to 10 significant digits)",
    ),
    Sig::both(
        "date",
        &[opt("ts", Ty::Int)],
        Ty::Str,
        "a Unix time (default now) in UTC, in the locale's date pattern",
    ),
    Sig::both(
        "currency",
        &[p("amount", Ty::Num), p("code", Ty::Str)],
        Ty::Str,
        "the amount in the locale's format for the currency code",
    ),
    Sig::both(
        "detect",
        &[p("source", Ty::Union(&[Ty::Str, REQ]))],
        Ty::Opt(&Ty::Str),
        "the best loaded locale for an Accept-Language value or a request, or nil/null",
    ),
    Sig::both(
        "reset",
        &[],
        Ty::Nil,
        "forget every locale and the active one",
    ),
];

const EMAIL_OPTIONS: Ty = Ty::Named("EmailOptions");
const EMAIL_RESULT: Ty = Ty::Named("EmailResult");

const EMAIL: &[Sig] = &[
    Sig::both(
        "send",
        &[p("options", EMAIL_OPTIONS)],
        EMAIL_RESULT,
        "send one email through SMTP or Postmark, SendGrid or Resend; never raises",
    )
    .slow(),
    Sig::js_only(
        "sendAsync",
        &[p("options", EMAIL_OPTIONS)],
        Ty::Promise(&EMAIL_RESULT),
        "email.send as a promise: the worker serves other requests while the mail goes out",
    )
    .slow(),
];

const EMAIL_TYPES: &[TypeDef] = &[
    TypeDef {
        name: "EmailOptions",
        doc: "One email and how to send it (snake_case in both languages)",
        fields: &[
            f("from", Ty::Str, "the sender"),
            f("to", Ty::Str, "the recipient"),
            f("subject", Ty::Str, "the subject"),
            f("body", Ty::Str, "the body"),
            f_opt("cc", STRINGS, "addresses to copy"),
            f_opt("reply_to", Ty::Str, "a Reply-To address"),
            f_opt(
                "content_type",
                Ty::Str,
                "default text/plain; text/html picks the APIs' HTML field",
            ),
            f_opt(
                "provider",
                Ty::Literal(&["smtp", "postmark", "sendgrid", "resend"]),
                "default \"smtp\"",
            ),
            f_opt("smtp_host", Ty::Str, "the SMTP server (required for smtp)"),
            f_opt("smtp_port", Ty::Int, "default 587"),
            f_opt("smtp_user", Ty::Str, "AUTH user"),
            f_opt("smtp_pass", Ty::Str, "AUTH password"),
            f_opt(
                "smtp_tls",
                Ty::Union(&[Ty::Bool, Ty::Int]),
                "true (default): STARTTLS; false: plain; 2: TLS from the start",
            ),
            f_opt(
                "api_key",
                Ty::Str,
                "the API provider's key (required for an API)",
            ),
            f_opt(
                "api_url",
                Ty::Str,
                "send the API request elsewhere (a proxy, a test server)",
            ),
        ],
        methods: &[],
    },
    TypeDef {
        name: "EmailResult",
        doc: "The outcome of a send; every failure is reported here",
        fields: &[
            f("ok", Ty::Bool, "whether the message was accepted"),
            f_opt(
                "error",
                Ty::Str,
                "why not: \"to required\", \"postmark: <response body>\", …",
            ),
        ],
        methods: &[],
    },
];

const DIALECT: &[Sig] = &[
    Sig::lua_only(
        "sql",
        &[p("sql", Ty::Str)],
        Ty::Str,
        "the SQL with each {int}, {id} and {lock} replaced by this database's words",
    ),
    Sig::js_only(
        "words",
        &[],
        Ty::Named("DialectWords"),
        "this database's words for {int}, {id} and {lock}",
    ),
];

const DIALECT_TYPES: &[TypeDef] = &[TypeDef {
    name: "DialectWords",
    doc: "The SQL words that differ by database",
    fields: &[
        f("int", Ty::Str, "INTEGER / BIGINT"),
        f(
            "id",
            Ty::Str,
            "INTEGER PRIMARY KEY AUTOINCREMENT / BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        ),
        f("lock", Ty::Str, "empty / FOR UPDATE SKIP LOCKED"),
    ],
    methods: &[],
}];

const AUTH: &[Sig] = &[
    Sig::named(
        "session_middleware",
        "sessionMiddleware",
        &[opt("options", Ty::Record)],
        MIDDLEWARE,
        "a middleware requiring a session cookie (Lua hull_session, JS hull.sid): sets req.ctx.session and the id (Lua session_id, JS sessionId); else 401, unless optional or a login path is set",
    ),
    Sig::named(
        "jwt_middleware",
        "jwtMiddleware",
        &[p("options", Ty::Record)],
        MIDDLEWARE,
        "a middleware requiring Authorization: Bearer <jwt> signed with options.secret (Lua sets req.ctx.user; JS req.ctx.claims and req.ctx.token); else 401, unless optional",
    ),
    Sig::both(
        "login",
        &[
            p("req", REQ),
            p("res", RES),
            p("data", Ty::Record),
            opt("options", Ty::Record),
        ],
        Ty::Str,
        "end the session the request carried, start one holding data and send its cookie; the session id",
    ),
    Sig::both(
        "logout",
        &[p("req", REQ), p("res", RES), opt("options", Ty::Record)],
        Ty::Nil,
        "end the request's session and send a cookie that clears it",
    ),
];

const CORS: &[Sig] = &[
    Sig::both(
        "middleware",
        &[opt("options", Ty::Record)],
        MIDDLEWARE,
        "a pre-body middleware adding CORS headers for allowed origins and answering their preflights with 204 (options: origins, methods, headers, credentials, max_age)",
    ),
    Sig::named(
        "is_allowed_origin",
        "isAllowedOrigin",
        &[p("origin", Ty::Str), p("origins", STRINGS)],
        Ty::Bool,
        "whether the origin is in the list or the list holds \"*\"",
    ),
];

const CSRF: &[Sig] = &[
    Sig::both(
        "generate",
        &[p("session_id", Ty::Str), p("secret", Ty::Str)],
        Ty::Str,
        "a CSRF token for the session",
    ),
    Sig::both(
        "verify",
        &[
            p("token", Ty::Str),
            p("session_id", Ty::Str),
            p("secret", Ty::Str),
            opt("max_age", Ty::Int),
        ],
        Ty::Bool,
        "whether the token was made for the session with the secret at most max_age (3600) seconds ago",
    ),
    Sig::both(
        "middleware",
        &[p("options", Ty::Record)],
        MIDDLEWARE,
        "a post-body middleware: safe methods get req.ctx.csrf_token, other methods of a request with a session need a valid token in X-CSRF-Token or the _csrf field (else 403)",
    ),
];

const IDEMPOTENCY: &[Sig] = &[
    Sig::both(
        "init",
        &[opt("options", Ty::Record)],
        Ty::Nil,
        "create the keys table if needed; options.ttl: seconds a key and its response are kept (default 86400)",
    ),
    Sig::both(
        "middleware",
        &[opt("options", Ty::Record)],
        MIDDLEWARE,
        "a post-body middleware that replays the stored response to a retry with the same Idempotency-Key (409 for another body or one still running)",
    ),
    Sig::both(
        "respond",
        &[
            p("req", REQ),
            p("res", RES),
            p("status", Ty::Int),
            p("data", Ty::Any),
            opt("headers", Ty::Record),
        ],
        Ty::Nil,
        "send data as JSON with the status (and extra headers), stored for retries of the request's key",
    ),
    Sig::both(
        "complete",
        &[p("req", REQ)],
        Ty::Nil,
        "mark the request's key done without storing a response",
    ),
    Sig::both("cleanup", &[], Ty::Int, "delete expired keys; how many"),
];

const INBOX: &[Sig] = &[
    Sig::both(
        "init",
        &[opt("options", Ty::Record)],
        Ty::Nil,
        "create the table if needed; options.ttl: seconds an id is remembered (default 604800)",
    ),
    Sig::named(
        "is_duplicate",
        "isDuplicate",
        &[p("id", Ty::Str), opt("source", Ty::Str)],
        Ty::Bool,
        "whether message id from source (default \"default\") was processed and has not expired",
    ),
    Sig::named(
        "mark_processed",
        "markProcessed",
        &[
            p("id", Ty::Str),
            opt("source", Ty::Str),
            opt("options", Ty::Record),
        ],
        Ty::Nil,
        "record message id from source as processed (options.ttl overrides the ttl)",
    ),
    Sig::named(
        "check_and_mark",
        "checkAndMark",
        &[
            p("id", Ty::Str),
            opt("source", Ty::Str),
            opt("options", Ty::Record),
        ],
        Ty::Bool,
        "true if the id was already processed; else record it and return false (atomic)",
    ),
    Sig::both("cleanup", &[], Ty::Int, "delete expired ids; how many"),
];

const LOGGER: &[Sig] = &[
    Sig::both(
        "middleware",
        &[opt("options", Ty::Record)],
        MIDDLEWARE,
        "a middleware logging one line per request and setting req.ctx.request_id and X-Request-ID (options: skip, include_headers)",
    ),
    Sig::named(
        "generate_id",
        "generateId",
        &[],
        Ty::Str,
        "the next request id (lowercase hex), unique across the server's workers",
    ),
    Sig::named(
        "format_line",
        "formatLine",
        &[p("entries", Ty::List(&Ty::List(&Ty::Any)))],
        Ty::Str,
        "a list of {key, value} pairs as one logfmt line",
    ),
    Sig::named(
        "should_skip",
        "shouldSkip",
        &[p("path", Ty::Str), opt("list", STRINGS)],
        Ty::Bool,
        "whether the path is one of the exact paths in the list",
    ),
];

const FLUSH: Ty = Ty::Named("OutboxFlush");

const OUTBOX: &[Sig] = &[
    Sig::both(
        "init",
        &[opt("options", Ty::Record)],
        Ty::Nil,
        "create the table if needed; options.max_attempts (JS maxAttempts): tries before an item fails (default 5)",
    ),
    Sig::both(
        "enqueue",
        &[p("item", Ty::Named("OutboxItem"))],
        Ty::Int,
        "add a message to deliver (in the caller's transaction, if any); its id",
    ),
    Sig::both(
        "flush",
        &[opt("options", Ty::Record)],
        FLUSH,
        "deliver the due items (at most options.limit, default 50), retrying failures with backoff",
    )
    .slow(),
    Sig::js_only(
        "flushAsync",
        &[opt("options", Ty::Record)],
        Ty::Promise(&FLUSH),
        "outbox.flush as a promise: the worker serves other requests while it posts",
    )
    .slow(),
    Sig::both(
        "middleware",
        &[],
        MIDDLEWARE,
        "a middleware marking the request for flush_if_needed",
    ),
    Sig::named(
        "flush_if_needed",
        "flushIfNeeded",
        &[p("req", REQ), opt("options", Ty::Record)],
        Ty::Opt(&FLUSH),
        "outbox.flush(options) if the outbox middleware ran for the request, else nil/null",
    )
    .slow(),
    Sig::both(
        "stats",
        &[],
        Ty::Named("OutboxStats"),
        "how many items are pending, delivered and failed",
    ),
    Sig::both(
        "list",
        &[opt("filter", Ty::Record)],
        Ty::List(&Ty::Record),
        "items, newest first (filter: destination, state, kind, limit = 50)",
    ),
    Sig::both(
        "cleanup",
        &[opt("max_age", Ty::Int)],
        Ty::Int,
        "delete delivered items older than max_age seconds (default 7 days); how many",
    ),
];

const OUTBOX_TYPES: &[TypeDef] = &[
    TypeDef {
        name: "OutboxItem",
        doc: "A message to deliver",
        fields: &[
            f(
                "kind",
                Ty::Str,
                "\"webhook\" or \"http\" (posted by flush); other kinds fail",
            ),
            f("destination", Ty::Str, "the URL to post to"),
            f(
                "payload",
                Ty::Union(&[Ty::Str, Ty::Record]),
                "the body; a table/object is JSON-encoded",
            ),
            f_opt(
                "headers",
                Ty::Union(&[Ty::Record, Ty::Str]),
                "request headers, or their JSON",
            ),
            f_opt(
                "idempotency_key",
                Ty::Str,
                "sent as Idempotency-Key (JS also idempotencyKey)",
            ),
            f_opt(
                "max_attempts",
                Ty::Int,
                "tries before the item fails (JS also maxAttempts)",
            ),
            f_opt("delay", Ty::Num, "seconds before the first attempt"),
        ],
        methods: &[],
    },
    TypeDef {
        name: "OutboxFlush",
        doc: "What a flush did",
        fields: &[
            f("delivered", Ty::Int, "items delivered"),
            f("failed", Ty::Int, "items that used their last attempt"),
            f("retried", Ty::Int, "items to try again later"),
        ],
        methods: &[],
    },
    TypeDef {
        name: "OutboxStats",
        doc: "Items by state",
        fields: &[
            f("pending", Ty::Int, "not delivered yet"),
            f("delivered", Ty::Int, "delivered"),
            f("failed", Ty::Int, "given up"),
        ],
        methods: &[],
    },
];

const CHECKED: Ty = Ty::Named("RateLimitCheck");

const RATELIMIT: &[Sig] = &[
    Sig::both(
        "middleware",
        &[opt("options", Ty::Record)],
        MIDDLEWARE,
        "a middleware answering 429 over the limit, with X-RateLimit-* headers (options: limit 60, window 60 s, key, max_keys, name)",
    ),
    Sig::lua_only(
        "check",
        &[
            p("buckets", Ty::Record),
            p("key", Ty::Str),
            p("limit", Ty::Int),
            p("window", Ty::Int),
            p("now", Ty::Int),
            opt("bucket_count", Ty::Int),
        ],
        CHECKED,
        "Hull's helper on a table the caller keeps: counts one request for the key; also returns the new bucket count",
    ),
    Sig::js_only(
        "check",
        &[
            p("buckets", Ty::Record),
            p("key", Ty::Str),
            p("limit", Ty::Int),
            p("window", Ty::Int),
            p("now", Ty::Int),
        ],
        CHECKED,
        "Hull's helper on an object the caller keeps: counts one request for the key",
    ),
];

const RATELIMIT_TYPES: &[TypeDef] = &[TypeDef {
    name: "RateLimitCheck",
    doc: "The state of a key's window",
    fields: &[
        f(
            "allowed",
            Ty::Bool,
            "whether the request is within the limit",
        ),
        f("remaining", Ty::Int, "requests left in the window"),
        f("reset", Ty::Int, "epoch seconds when the window ends"),
    ],
    methods: &[],
}];

const SESSION: &[Sig] = &[
    Sig::both(
        "init",
        &[opt("options", Ty::Record)],
        Ty::Nil,
        "create the sessions table if needed; options.ttl: seconds a session lives after its last use (default 86400)",
    ),
    Sig::both(
        "create",
        &[p("data", Ty::Record)],
        Ty::Str,
        "store data in a new session; its id (64 hex chars)",
    ),
    Sig::both(
        "load",
        &[p("id", Ty::Str)],
        Ty::Opt(&Ty::Record),
        "the session's data, or nil/null if missing or expired; slides its expiry",
    ),
    Sig::both(
        "update",
        &[p("id", Ty::Str), p("data", Ty::Record)],
        Ty::Bool,
        "replace a live session's data and slide its expiry; whether there was one",
    ),
    Sig::both(
        "destroy",
        &[p("id", Ty::Str)],
        Ty::Bool,
        "delete the session; whether it existed",
    ),
    Sig::both("cleanup", &[], Ty::Int, "delete expired sessions; how many"),
];

const TRANSACTION: &[Sig] = &[
    Sig::both(
        "middleware",
        &[],
        MIDDLEWARE,
        "a middleware that sets req.ctx._txn = true and nothing else (it does not wrap the handler)",
    ),
    Sig::both(
        "run",
        &[p("fn", Ty::Fn)],
        Ty::Any,
        "db.batch(fn): commit, or roll back and re-raise; what fn returns",
    ),
    Sig::named(
        "try",
        "attempt",
        &[p("fn", Ty::Fn)],
        Ty::Bool,
        "db.batch(fn) without raising: Lua true, or false and the error; JS [true, null] or [false, error]",
    )
    .js_returns(PAIR),
];

const TABLES: &[Sig] = &[Sig::both(
    "create",
    &[p("sql", Ty::Str)],
    Ty::Nil,
    "run a CREATE … IF NOT EXISTS statement with the stdlib's right to the _hull_* tables, once more if it fails (Lua: through dialect.sql)",
)];
