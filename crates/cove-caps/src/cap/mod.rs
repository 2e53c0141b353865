//! Every capability function a script calls, in one table ([`functions`]),
//! and the one value type that crosses a binding ([`CapValue`]).
//!
//! Each runtime binds every entry with one loop and converts values with
//! one converter each way (cove-lua/src/caps.rs, cove-js/src/caps.rs); the
//! checks of arguments, the messages and the results are made here, once,
//! by each capability's adapter (crypto.rs, kv.rs, http.rs, smtp.rs,
//! env.rs, log.rs, time, json.rs, db.rs, res.rs, routes.rs; `metrics`:
//! crate::app_metrics). Adding a function to a
//! capability's own table adds it to both runtimes and to the API catalog
//! (api/tables.rs) with no binding code. Some shapes have a fast path in every binding's loop, still
//! with no per-function code: a function of no arguments that reads a value
//! ([`CapFn::reading`]: the clock, called on many requests). And the
//! arguments come in one of three forms ([`ArgForm`]): values, text as the
//! runtime writes it (log), or JSON text as the runtime encodes it (json);
//! a result may be JSON text the binding decodes ([`CapValue::Json`]).
//!
//! `db`'s statements go through the table too (db.rs): a query's rows are
//! written into the runtime's own result builder ([`CapFn::start_into`]),
//! not copied through a [`CapValue`]. So do `res`'s methods, a WebSocket
//! connection's and `app.publish` (res.rs, on the response in progress):
//! methods of a type ([`CapFn::method_of`]) bound into the runtime's `res`
//! object or connection objects, that read their arguments where they lie
//! ([`CapFn::run_in_place`]; as values they cost ~400 instructions a call
//! more). And so do `app`'s routes, middleware and `app.ws` (routes.rs):
//! their arguments as values, the handler handed over as the runtime's
//! own function handle ([`CapFn::register`]; for `app.ws`, the dispatcher
//! the runtime's prelude makes of the handlers), and `app.manifest` and
//! its kin, on the same registry. `metrics.counter` and its kin return an
//! object of a type with methods ([`CapFn::returns_object`]), which the
//! binding gives the type's methods. `template` and `req` are bound by each
//! runtime: they read or build the runtime's own values in place (pages,
//! the request's lazy fields). The catalog declares them too, and
//! crates/cove/tests/api_catalog.rs checks that each runtime exposes
//! exactly those.

mod crypto;
mod db;
mod env;
mod http;
mod json;
mod kv;
mod log;
pub mod res;
mod routes;
mod smtp;
#[cfg(test)]
mod tests;
mod value;

use std::borrow::Cow;
use std::sync::OnceLock;

use cove_core::{CapError, Job};

use crate::kv::Kv;
use crate::log::Level;
pub use crate::time::Reading;

pub use db::EachRow;
pub use value::{CapValue, Runtime};

/// What a capability function needs from where it is called.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub runtime: Runtime,
    /// The manifest's outbound hosts (empty: not configured, or `cove test`).
    pub hosts: &'a [String],
    /// The manifest's `env` allow-list (`None`: not declared).
    pub env_allow: Option<&'a [String]>,
    pub kv: &'a Kv,
    /// The worker's database connection (`None`: a VM without one).
    pub db: Option<&'a cove_db::SharedDb>,
    /// Whose statements `db.*` runs: the app's, or the stdlib's (its own
    /// `db`, bound with the right to the reserved tables).
    pub origin: cove_db::Origin,
    /// Called as JS's `…Async` form (errors name it so).
    pub is_async: bool,
}

/// The origin a binding's flag for the stdlib's `db` stands for.
pub fn origin(stdlib: bool) -> cove_db::Origin {
    if stdlib {
        cove_db::Origin::Stdlib
    } else {
        cove_db::Origin::App
    }
}

/// How a call went on: done now, or a job to wait for whose output is a
/// `Result<CapValue, CapError>` (read it with [`job_result`]).
pub enum Started {
    Done(CapValue),
    Job(Job),
}

/// A started job's output, as the binding receives it.
pub fn job_result(out: cove_core::JobOutput) -> Result<CapValue, CapError> {
    out.downcast::<Result<CapValue, CapError>>()
        .map(|r| *r)
        .unwrap_or_else(|_| Err(CapError::new("internal", "the background job failed")))
}

/// A blocking job whose output becomes the call's result.
fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
    finish: fn(T) -> Result<CapValue, CapError>,
) -> Started {
    Started::Job(Job::new(move || finish(work())))
}

/// The function behind an entry.
#[derive(Clone, Copy)]
enum Kind {
    Crypto(&'static crate::crypto::CryptoFn),
    Kv(&'static crate::kv::KvFn),
    Http(&'static crate::http::HttpFn),
    SmtpSend,
    EnvGet,
    Time(&'static crate::time::TimeFn),
    Log(Level),
    Json(&'static crate::json::JsonFn),
    Db(&'static crate::db::DbFn),
    Res(&'static crate::response::ResFn),
    Route(&'static crate::routes::RouteFn),
    App(&'static crate::routes::AppFn),
    /// `metrics.counter` …: makes a metric's object.
    MetricNew(&'static crate::app_metrics::KindDef),
    /// A method of a metric's object (`c:inc()`).
    MetricCall(
        &'static crate::app_metrics::KindDef,
        &'static crate::app_metrics::Method,
    ),
}

/// How a binding hands an entry its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgForm {
    /// Each as a [`CapValue`].
    Values,
    /// Each as text, as the runtime writes a value (Lua `tostring`, JS
    /// `String`, objects as JSON), in a [`CapValue::Str`].
    Text,
    /// Each as JSON text, as the runtime encodes a value (Lua by Hull's
    /// rules, JS `JSON.stringify`, `null` for what it leaves out), in a
    /// [`CapValue::Str`]; a value JSON cannot hold fails in the binding
    /// ([`json_failed`]).
    Json,
}

/// A binding's failure to encode a value as JSON, or to decode a
/// [`CapValue::Json`] result, as the script sees it (`json.encode: …`).
pub fn json_failed(op: crate::json::JsonOp, reason: impl std::fmt::Display) -> CapError {
    let code = match op {
        crate::json::JsonOp::Encode => "json.encode",
        crate::json::JsonOp::Decode => "json.decode",
    };
    CapError::new(code, format!("{code}: {reason}"))
}

/// One script-facing capability function.
pub struct CapFn {
    /// Its module's JS specifier (`hull:crypto`); the catalog says where
    /// the module lives in Lua (a global, or `require`).
    pub module: &'static str,
    /// Its Lua name; `None`: JS only.
    pub lua: Option<&'static str>,
    /// Its JS name; `None`: Lua only.
    pub js: Option<&'static str>,
    /// JS also has `<js>Async`, returning a promise.
    pub js_async: bool,
    kind: Kind,
}

impl CapFn {
    /// The name it is called by in `scope` (`hashPasswordAsync`); made
    /// only for JS's `…Async` forms.
    pub fn called_as(&self, scope: &Scope) -> Cow<'static, str> {
        match scope.runtime {
            Runtime::Lua => Cow::Borrowed(self.lua.unwrap_or_default()),
            Runtime::Js if scope.is_async => {
                Cow::Owned(format!("{}Async", self.js.unwrap_or_default()))
            }
            Runtime::Js => Cow::Borrowed(self.js.unwrap_or_default()),
        }
    }

    /// Whether a call can wait (a Lua binding makes it a suspending
    /// function): always for the network, for kv only on Redis, for a
    /// statement only on PostgreSQL.
    pub fn can_wait(&self, scope: &Scope) -> bool {
        match self.kind {
            Kind::Crypto(f) => f.slow,
            Kind::Kv(_) => !scope.kv.is_local(),
            Kind::Http(_) | Kind::SmtpSend => true,
            Kind::Db(f) => {
                f.runs_sql()
                    && scope
                        .db
                        .is_some_and(|db| db.borrow().dialect() == cove_db::Dialect::Postgres)
            }
            Kind::EnvGet
            | Kind::Time(_)
            | Kind::Log(_)
            | Kind::Json(_)
            | Kind::Res(_)
            | Kind::Route(_)
            | Kind::App(_)
            | Kind::MetricNew(_)
            | Kind::MetricCall(..) => false,
        }
    }

    /// The type it is a method of (Lua `obj:name(...)`, JS
    /// `obj.name(...)`; the object itself is not an argument), or `None`
    /// for a function of its module.
    pub fn method_of(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Res(f) => f.of,
            Kind::MetricCall(def, _) => Some(def.type_name),
            _ => None,
        }
    }

    /// Its result is an object of this type, which the binding gives the
    /// type's methods ([`methods_of`]; a Lua metatable, a JS prototype):
    /// what `metrics.counter` returns. A method that does not read in
    /// place gets its object as its first argument, as a value.
    pub fn returns_object(&self) -> Option<&'static str> {
        match self.kind {
            Kind::MetricNew(def) => Some(def.type_name),
            _ => None,
        }
    }

    /// A method that returns the object it was called on, so calls chain.
    pub fn chains(&self) -> bool {
        matches!(self.kind, Kind::Res(f) if f.chains())
    }

    /// It reads its arguments where they lie, through the binding's
    /// [`res::ArgReader`] ([`CapFn::run_in_place`]), not as [`CapValue`]s:
    /// `res`'s and `ws`'s methods and `app.publish`, on every request's or
    /// message's path.
    pub fn reads_in_place(&self) -> bool {
        matches!(self.kind, Kind::Res(_))
    }

    /// Run a function that [`reads_in_place`](CapFn::reads_in_place). It
    /// returns nothing (a method that chains returns its object).
    /// Generic over the reader, so each binding's is inlined into it.
    pub fn run_in_place<R: res::ArgReader + ?Sized>(
        &self,
        rt: Runtime,
        args: &mut R,
    ) -> Result<(), CapError> {
        match self.kind {
            Kind::Res(f) => res::run(f, rt, args),
            _ => Err(CapError::new(
                "internal",
                "not a function that reads in place",
            )),
        }
    }

    /// A function that registers a handler while the app loads (`app.get`,
    /// `app.use`): the argument that is the handler, which the binding
    /// hands to [`CapFn::register`] as its own function handle.
    pub fn handler_arg(&self) -> Option<usize> {
        match self.kind {
            Kind::Route(f) => Some(f.handler_arg()),
            _ => None,
        }
    }

    /// Its handler argument is a table of handlers (`app.ws`), which the
    /// binding makes into one dispatcher function, not a function.
    pub fn takes_handlers(&self) -> bool {
        matches!(self.kind, Kind::Route(f) if f.takes_handlers())
    }

    /// It acts on the app's registry ([`CapFn::register`]): `app`'s
    /// routes, middleware, `app.ws`, and the manifest's functions.
    pub fn uses_registry(&self) -> bool {
        matches!(self.kind, Kind::Route(_) | Kind::App(_))
    }

    /// Run a function that [`uses_registry`](CapFn::uses_registry), its
    /// arguments as values (a handler's only for its type in a message):
    /// add `handler` to the app's `registry` (`None` when that argument is
    /// not a function), or give or read the manifest.
    pub fn register<H>(
        &self,
        rt: Runtime,
        args: &[CapValue],
        handler: Option<H>,
        registry: &mut crate::Registry<H>,
    ) -> Result<CapValue, CapError> {
        match self.kind {
            Kind::Route(f) => {
                routes::register(f, rt, args, handler, registry).map(|()| CapValue::Nothing)
            }
            Kind::App(f) => routes::call(f, rt, args, registry),
            _ => Err(CapError::new(
                "internal",
                "not a function of the app's registry",
            )),
        }
    }

    /// Whether its result is a query's rows: a binding gives
    /// [`CapFn::start_into`] its own result builder (on SQLite the rows are
    /// written there as the database reads them; copied into a
    /// [`CapValue::Rows`] a 20-row result cost thousands of instructions).
    pub fn returns_rows(&self) -> bool {
        matches!(self.kind, Kind::Db(f) if f.op == crate::db::DbOp::Query)
    }

    /// A function of no arguments that needs no scope: bindings call it
    /// through a fast path of their own (it runs on many requests).
    pub fn reading(&self) -> Option<Reading> {
        match self.kind {
            Kind::Time(f) => Some(f.read),
            _ => None,
        }
    }

    /// Its place in [`functions`]: a binding's fast function keeps it to
    /// find the entry again on each call.
    pub fn index(&'static self) -> usize {
        functions()
            .iter()
            .position(|g| std::ptr::eq(g, self))
            .unwrap_or(usize::MAX)
    }

    /// The form the binding converts the arguments to.
    pub fn arg_form(&self) -> ArgForm {
        match self.kind {
            Kind::Log(_) => ArgForm::Text,
            Kind::Json(f) if f.op == crate::json::JsonOp::Encode => ArgForm::Json,
            _ => ArgForm::Values,
        }
    }

    /// A call now would do nothing (a log line below the level): the
    /// binding returns nothing without converting the arguments.
    pub fn skips(&self) -> bool {
        match self.kind {
            Kind::Log(level) => !cove_core::log::enabled(level),
            _ => false,
        }
    }

    /// Check the arguments and start the call. An error is the message the
    /// script sees with its code (`crypto.argument`, `kv.bad_key`, …).
    pub fn start(&self, scope: &Scope, args: Vec<CapValue>) -> Result<Started, CapError> {
        match self.kind {
            Kind::Crypto(f) => crypto::start(f, scope, self.called_as(scope), &args),
            Kind::Kv(f) => kv::start(f, scope, &args),
            Kind::Http(f) => http::start(f, scope, &args),
            Kind::SmtpSend => smtp::start(scope, &args),
            Kind::EnvGet => env::get(scope, &args),
            Kind::Time(f) => Ok(Started::Done(match f.read {
                Reading::Int(read) => CapValue::Int(read()),
                Reading::Text(read) => CapValue::Str(read().into_bytes()),
            })),
            Kind::Log(level) => log::write(level, &args),
            Kind::Json(f) => json::start(f, scope, args),
            Kind::Db(f) => db::start(f, scope, args, None),
            Kind::Res(f) => res::run(
                f,
                scope.runtime,
                &mut res::Values::of(f, &args, scope.runtime),
            )
            .map(|()| Started::Done(CapValue::Nothing)),
            Kind::MetricNew(def) => crate::app_metrics::Metric::new(def.kind, &args, scope.runtime)
                .map(|m| Started::Done(m.object())),
            Kind::MetricCall(def, m) => {
                crate::app_metrics::call_on(def.kind, m, &args, scope.runtime)
                    .map(|()| Started::Done(CapValue::Nothing))
            }
            Kind::Route(_) | Kind::App(_) => Err(CapError::new(
                "internal",
                "a function of the app's registry is called through CapFn::register",
            )),
        }
    }

    /// [`CapFn::start`] for a function that [`returns_rows`](CapFn::returns_rows):
    /// rows read now go to `each_row` and the result is
    /// [`CapValue::Nothing`]; a job's output is still a [`CapValue::Rows`].
    pub fn start_into(
        &self,
        scope: &Scope,
        args: Vec<CapValue>,
        each_row: EachRow<'_>,
    ) -> Result<Started, CapError> {
        match self.kind {
            Kind::Db(f) => db::start(f, scope, args, Some(each_row)),
            _ => self.start(scope, args),
        }
    }

    /// Start and, when it makes a job, run the job here (JS's synchronous
    /// forms, and Lua where the script cannot suspend).
    pub fn call(&self, scope: &Scope, args: Vec<CapValue>) -> Result<CapValue, CapError> {
        match self.start(scope, args)? {
            Started::Done(v) => Ok(v),
            Started::Job(job) => job_result(job.run()),
        }
    }
}

/// Every capability function bound by the loop, by module.
pub fn functions() -> &'static [CapFn] {
    static ALL: OnceLock<Vec<CapFn>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<CapFn> = crate::crypto::FUNCTIONS
            .iter()
            .map(|f| CapFn {
                module: "hull:crypto",
                lua: Some(f.lua),
                js: Some(f.js),
                js_async: f.slow,
                kind: Kind::Crypto(f),
            })
            .collect();
        all.extend(crate::kv::FUNCTIONS.iter().map(|f| CapFn {
            module: "hull:kv",
            lua: Some(f.name),
            js: Some(f.name),
            js_async: true,
            kind: Kind::Kv(f),
        }));
        all.extend(crate::http::FUNCTIONS.iter().map(|f| CapFn {
            module: "hull:http",
            lua: f.lua,
            js: Some(f.js),
            js_async: true,
            kind: Kind::Http(f),
        }));
        all.push(CapFn {
            module: "hull:smtp",
            lua: Some("send"),
            js: Some("send"),
            js_async: true,
            kind: Kind::SmtpSend,
        });
        all.push(CapFn {
            module: "hull:env",
            lua: Some("get"),
            js: Some("get"),
            js_async: false,
            kind: Kind::EnvGet,
        });
        all.extend(crate::time::FUNCTIONS.iter().map(|f| CapFn {
            module: "hull:time",
            lua: Some(f.lua),
            js: Some(f.js),
            js_async: false,
            kind: Kind::Time(f),
        }));
        all.extend(crate::json::FUNCTIONS.iter().map(|f| CapFn {
            module: "hull:json",
            lua: Some(f.name),
            js: Some(f.name),
            js_async: false,
            kind: Kind::Json(f),
        }));
        all.extend(crate::db::FUNCTIONS.iter().map(|f| CapFn {
            module: "hull:db",
            lua: Some(f.lua),
            js: Some(f.js),
            js_async: f.runs_sql(),
            kind: Kind::Db(f),
        }));
        all.extend(crate::routes::FUNCTIONS.iter().map(|f| CapFn {
            module: "hull:app",
            lua: Some(f.lua),
            js: Some(f.js),
            js_async: false,
            kind: Kind::Route(f),
        }));
        all.extend(crate::routes::APP_FUNCTIONS.iter().map(|f| CapFn {
            module: "hull:app",
            lua: f.lua,
            js: Some(f.js),
            js_async: false,
            kind: Kind::App(f),
        }));
        all.extend(crate::response::FUNCTIONS.iter().map(|f| CapFn {
            module: "hull:app",
            lua: Some(f.name),
            js: Some(f.name),
            js_async: false,
            kind: Kind::Res(f),
        }));
        for def in crate::app_metrics::KINDS {
            all.push(CapFn {
                module: "hull:metrics",
                lua: Some(def.name),
                js: Some(def.name),
                js_async: false,
                kind: Kind::MetricNew(def),
            });
            all.extend(def.methods.iter().map(|m| CapFn {
                module: "hull:metrics",
                lua: Some(m.name),
                js: Some(m.name),
                js_async: false,
                kind: Kind::MetricCall(def, m),
            }));
        }
        all.extend(crate::log::FUNCTIONS.iter().map(|&(name, level, _)| CapFn {
            module: "hull:log",
            lua: Some(name),
            js: Some(name),
            js_async: false,
            kind: Kind::Log(level),
        }));
        all
    })
}

/// The modules [`functions`] fills, each once, in table order.
pub fn modules() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for f in functions() {
        if !out.contains(&f.module) {
            out.push(f.module);
        }
    }
    out
}

/// The functions of one module (not the methods of its types).
pub fn module_functions(module: &str) -> impl Iterator<Item = &'static CapFn> + '_ {
    functions()
        .iter()
        .filter(move |f| f.module == module && f.method_of().is_none())
}

/// The methods of one type (`Response`: `res`'s).
pub fn methods_of(type_name: &str) -> impl Iterator<Item = &'static CapFn> + '_ {
    functions()
        .iter()
        .filter(move |f| f.method_of() == Some(type_name))
}
