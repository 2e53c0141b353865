//! The capabilities bound by a loop over their own tables (crypto, kv,
//! http, metrics; crate::cap, crate::app_metrics): their signatures here are read off those tables,
//! where each function is declared once with its names, parameters, result
//! and doc (http's docs follow from each function's shape), so a function
//! added there appears here, in the generated docs and editor types, and
//! in both runtimes.

use super::{opt, p, Module, Param, Sig, Ty};
use crate::app_metrics;
use crate::crypto::{self, Arg};
use crate::http::{self, Shape};
use crate::kv::{self, KvParam};

const DATA: Ty = Ty::Union(&[Ty::Str, Ty::Bytes]);

const KEY_PAIR_TYPE: super::TypeDef = super::TypeDef {
    name: "KeyPair",
    doc: "A key pair in hex: Lua returns the two as separate results (public, secret)",
    fields: &[
        super::types::f("publicKey", Ty::Str, "the public key, hex"),
        super::types::f("secretKey", Ty::Str, "the secret key, hex"),
    ],
    methods: &[],
};

/// Leak a list built at start-up into the `'static` the catalog holds
/// (once per process: the catalog is built once).
pub(super) fn leak<T>(v: Vec<T>) -> &'static [T] {
    Vec::leak(v)
}

/// JS's `<js>Async` twin of a function that can wait: the same
/// parameters, a promise of its result.
pub(super) fn async_twin(js: &str, params: &'static [Param], ret: Ty, doc: &'static str) -> Sig {
    let name = leak(vec![format!("{js}Async")])[0].as_str();
    let promised = leak(vec![ret]).first().expect("ret");
    Sig::js_only(name, params, Ty::Promise(promised), doc).slow()
}

pub(super) fn crypto() -> Module {
    let mut functions = Vec::new();
    for f in crypto::FUNCTIONS {
        let (ret, doc) = (f.ret, f.doc);
        assert_eq!(
            f.names.len(),
            f.args.len(),
            "crypto.{}: parameter names",
            f.lua
        );
        let params = leak(
            f.names
                .iter()
                .zip(f.args)
                .map(|(name, arg)| p(name, if *arg == Arg::Int { Ty::Int } else { DATA }))
                .collect(),
        );
        let sig = Sig::named(f.lua, f.js, params, ret, doc);
        functions.push(if f.slow { sig.slow() } else { sig });
        if f.slow {
            // JS runs the slow ones off the worker's thread as `…Async`.
            functions.push(async_twin(f.js, params, ret, doc));
        }
    }
    Module {
        js: "hull:crypto",
        lua_global: Some("crypto"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc: "Hashes, HMAC, passwords, Ed25519 signatures, NaCl secretbox/box, base64url and random bytes",
        functions,
        types: &[KEY_PAIR_TYPE],
    }
}

use crate::kv::KV_VALUE;

pub(super) fn kv() -> Module {
    let mut functions = Vec::new();
    for f in kv::FUNCTIONS {
        let (ret, doc) = (f.ret, f.doc);
        let params = leak(f.params.iter().map(|k| kv_param(*k)).collect());
        functions.push(Sig::both(f.name, params, ret, doc).slow());
        functions.push(async_twin(f.name, params, ret, doc));
    }
    Module {
        js: "hull:kv",
        lua_global: None,
        lua_require: Some("hull.kv"),
        native: true,
        private: false,
        default_export: false,
        doc: "A key-value store shared by every worker (and every process with --kv redis://)",
        functions,
        types: &[],
    }
}

fn kv_param(k: KvParam) -> Param {
    match k {
        KvParam::Key => p("key", Ty::Str),
        KvParam::Value => p("value", KV_VALUE),
        KvParam::Step => opt("step", Ty::Int),
        KvParam::Ttl => opt("ttl", Ty::Num),
    }
}

/// `hull:metrics`: its functions and the types of the objects they return
/// (their methods), read off [`app_metrics::KINDS`].
pub(super) fn metrics() -> Module {
    let mut functions = Vec::new();
    let mut types = Vec::new();
    for k in app_metrics::KINDS {
        let ret = Ty::Named(k.type_name);
        functions.push(Sig::both(k.name, METRIC_PARAMS, ret, k.doc));
        let methods = leak(
            k.methods
                .iter()
                .map(|m| {
                    let params = if m.default_one {
                        METHOD_PARAMS_N
                    } else {
                        METHOD_PARAMS_V
                    };
                    Sig::both(m.name, params, Ty::Nil, m.doc).method()
                })
                .collect(),
        );
        types.push(super::TypeDef {
            name: k.type_name,
            doc: leak(vec![format!(
                "What metrics.{} returns; labels, if given, are a table/object of names to strings, numbers or booleans",
                k.name
            )])[0]
                .as_str(),
            fields: METRIC_FIELDS,
            methods,
        });
    }
    Module {
        js: "hull:metrics",
        lua_global: Some("metrics"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc: "The app's own Prometheus metrics, served with Cove's on --metrics (app_<name>; no-ops without it)",
        functions,
        types: leak(types),
    }
}

const METRIC_FIELDS: &[super::types::Field] = &[super::types::f(
    "series",
    Ty::Str,
    "the series' name: app_<name>_total for a counter, app_<name> for the others",
)];
const METRIC_PARAMS: &[Param] = &[p("name", Ty::Str), opt("help", Ty::Str)];
const METHOD_PARAMS_N: &[Param] = &[opt("n", Ty::Num), opt("labels", Ty::Record)];
const METHOD_PARAMS_V: &[Param] = &[p("v", Ty::Num), opt("labels", Ty::Record)];

const HTTP_RESPONSE: Ty = Ty::Named("HttpResponse");
const OPTIONS: Ty = Ty::Named("HttpOptions");

const HTTP_TYPES: &[super::TypeDef] = &[
    super::TypeDef {
        name: "HttpResponse",
        doc: "What every http function returns; a non-2xx status is a normal result",
        fields: &[
            super::types::f("status", Ty::Int, "the status code"),
            super::types::f("body", Ty::Str, "the body (JS: decoded as UTF-8)"),
            super::types::f(
                "headers",
                Ty::Record,
                "lower-case header names to values (of duplicates, the last)",
            ),
        ],
        methods: &[],
    },
    super::TypeDef {
        name: "HttpOptions",
        doc: "Options of a request",
        fields: &[
            super::types::f_opt(
                "body",
                Ty::Str,
                "the request body (sent with Content-Length)",
            ),
            super::types::f_opt("headers", Ty::Record, "header names to values"),
        ],
        methods: &[],
    },
];

const REQUEST_PARAMS: &[Param] = &[
    p("method", Ty::Str),
    p("url", Ty::Str),
    opt("options", OPTIONS),
];
const NO_BODY_PARAMS: &[Param] = &[p("url", Ty::Str), opt("options", OPTIONS)];
const BODY_PARAMS: &[Param] = &[
    p("url", Ty::Str),
    opt("body", Ty::Str),
    opt("options", OPTIONS),
];

pub(super) fn http() -> Module {
    let mut functions = Vec::new();
    for f in http::FUNCTIONS {
        let (params, doc): (&'static [Param], &'static str) = match f.shape {
            Shape::Request => (
                REQUEST_PARAMS,
                "send a request with any method to a host in the manifest",
            ),
            Shape::NoBody(_) => (
                NO_BODY_PARAMS,
                leak(vec![format!(
                    "send a {} request (no body)",
                    method_of(f.shape)
                )])[0]
                    .as_str(),
            ),
            Shape::WithBody(_) => (
                BODY_PARAMS,
                leak(vec![format!(
                    "send a {} request with a body",
                    method_of(f.shape)
                )])[0]
                    .as_str(),
            ),
        };
        let sig = match f.lua {
            Some(lua) => Sig::named(lua, f.js, params, HTTP_RESPONSE, doc),
            None => Sig::js_only(f.js, params, HTTP_RESPONSE, doc),
        };
        functions.push(sig.slow());
        functions.push(async_twin(f.js, params, HTTP_RESPONSE, doc));
    }
    Module {
        js: "hull:http",
        lua_global: Some("http"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc: "Outbound HTTP to the hosts the manifest lists",
        functions,
        types: HTTP_TYPES,
    }
}

fn method_of(shape: Shape) -> &'static str {
    match shape {
        Shape::NoBody(m) | Shape::WithBody(m) => m,
        Shape::Request => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_is_described() {
        for f in crypto::FUNCTIONS {
            assert_eq!(f.names.len(), f.args.len(), "{}", f.lua);
            assert!(!f.doc.is_empty(), "{}", f.lua);
        }
        let slow = crypto::FUNCTIONS.iter().filter(|f| f.slow).count();
        assert_eq!(crypto().functions.len(), crypto::FUNCTIONS.len() + slow);
        for f in kv::FUNCTIONS {
            assert!(!f.doc.is_empty(), "{}", f.name);
        }
    }

    #[test]
    fn slow_functions_have_async_twins_in_js() {
        let m = crypto();
        let js: Vec<_> = m.functions.iter().filter_map(|s| s.js).collect();
        assert!(js.contains(&"hashPasswordAsync"), "{js:?}");
        let h = http();
        let js: Vec<_> = h.functions.iter().filter_map(|s| s.js).collect();
        assert!(
            js.contains(&"delAsync") && js.contains(&"getAsync"),
            "{js:?}"
        );
    }
}
