//! The capabilities bound by a loop over their own tables (crypto, kv,
//! http): their signatures here are read off those tables, so a function
//! added there appears here; the docs and result types each table lacks are
//! looked up by name in [`CRYPTO`], [`KV`] and [`HTTP`], and a unit test
//! fails when a table gains a function these do not describe.

use super::{opt, p, Module, Param, Sig, Ty};
use crate::crypto::{self, Arg};
use crate::http::{self, Shape};
use crate::kv::{self, KvParam};

/// What the crypto table does not say: (Lua name, parameter names, result, doc).
type Described = (&'static str, &'static [&'static str], Ty, &'static str);

const HEX: Ty = Ty::Str;
const DATA: Ty = Ty::Union(&[Ty::Str, Ty::Bytes]);
const KEY_PAIR: Ty = Ty::Named("KeyPair");
const TEXT_OR_NIL: Ty = Ty::Opt(&Ty::Str);

const CRYPTO: &[Described] = &[
    (
        "sha256",
        &["data"],
        HEX,
        "SHA-256 of the data, as 64 hex chars",
    ),
    (
        "sha512",
        &["data"],
        HEX,
        "SHA-512 of the data, as 128 hex chars",
    ),
    ("random", &["n"], Ty::Bytes, "n random bytes (1-65536)"),
    (
        "hash_password",
        &["password"],
        Ty::Str,
        "a PBKDF2-HMAC-SHA256 hash to store: \"pbkdf2:100000:<salt>:<hash>\"",
    ),
    (
        "verify_password",
        &["password", "stored"],
        Ty::Bool,
        "whether the password matches a stored hash (constant time)",
    ),
    (
        "ed25519_keypair",
        &[],
        KEY_PAIR,
        "a new Ed25519 key pair, hex (Lua: two results)",
    ),
    (
        "ed25519_sign",
        &["data", "secret_key"],
        HEX,
        "the Ed25519 signature of the data, 128 hex chars",
    ),
    (
        "ed25519_verify",
        &["data", "signature", "public_key"],
        Ty::Bool,
        "whether the signature is the key's signature of the data",
    ),
    (
        "auth",
        &["message", "key"],
        HEX,
        "NaCl crypto_auth (HMAC-SHA512/256) tag, 64 hex chars; key 32 bytes hex",
    ),
    (
        "auth_verify",
        &["tag", "message", "key"],
        Ty::Bool,
        "whether the tag authenticates the message",
    ),
    (
        "secretbox",
        &["message", "nonce", "key"],
        HEX,
        "XSalsa20-Poly1305 sealed message (hex); nonce 24 bytes, key 32, both hex",
    ),
    (
        "secretbox_open",
        &["sealed", "nonce", "key"],
        TEXT_OR_NIL,
        "the opened message, or nil/null if it does not authenticate",
    ),
    (
        "box",
        &["message", "nonce", "public_key", "secret_key"],
        HEX,
        "NaCl box (Curve25519-XSalsa20-Poly1305) sealed message, hex",
    ),
    (
        "box_open",
        &["sealed", "nonce", "public_key", "secret_key"],
        TEXT_OR_NIL,
        "the opened box, or nil/null if it does not authenticate",
    ),
    (
        "box_keypair",
        &[],
        KEY_PAIR,
        "a new Curve25519 key pair for box, hex (Lua: two results)",
    ),
    (
        "hmac_sha256",
        &["data", "key"],
        HEX,
        "HMAC-SHA256 of the data with a hex key, 64 hex chars",
    ),
    (
        "hmac_sha256_verify",
        &["data", "key", "expected"],
        Ty::Bool,
        "whether the HMAC matches (constant time)",
    ),
    (
        "base64url_encode",
        &["data"],
        Ty::Str,
        "URL-safe base64 without padding",
    ),
    (
        "base64url_decode",
        &["text"],
        TEXT_OR_NIL,
        "the decoded bytes (JS: as UTF-8 text), or nil/null if invalid",
    ),
    (
        "hs256_sign",
        &["data", "secret"],
        Ty::Str,
        "JWT HS256 signature: base64url HMAC-SHA256 keyed with the secret's bytes",
    ),
    (
        "hs256_verify",
        &["data", "secret", "signature"],
        Ty::Bool,
        "whether a JWT HS256 signature matches (constant time)",
    ),
];

const KEY_PAIR_TYPE: super::TypeDef = super::TypeDef {
    name: "KeyPair",
    doc: "A key pair in hex: Lua returns the two as separate results (public, secret)",
    fields: &[
        super::types::f("publicKey", Ty::Str, "the public key, hex"),
        super::types::f("secretKey", Ty::Str, "the secret key, hex"),
    ],
    methods: &[],
};

fn described<'a>(table: &'a [Described], name: &str) -> &'a Described {
    table
        .iter()
        .find(|d| d.0 == name)
        .unwrap_or_else(|| panic!("api/tables.rs does not describe crypto.{name}"))
}

/// Leak a list built at start-up into the `'static` the catalog holds
/// (once per process: the catalog is built once).
fn leak<T>(v: Vec<T>) -> &'static [T] {
    Vec::leak(v)
}

pub(super) fn crypto() -> Module {
    let mut functions = Vec::new();
    for f in crypto::FUNCTIONS {
        let (_, names, ret, doc) = *described(CRYPTO, f.lua);
        assert_eq!(
            names.len(),
            f.args.len(),
            "crypto.{}: parameter names",
            f.lua
        );
        let params = leak(
            names
                .iter()
                .zip(f.args)
                .map(|(name, arg)| p(name, if *arg == Arg::Int { Ty::Int } else { DATA }))
                .collect(),
        );
        let sig = Sig::named(f.lua, f.js, params, ret, doc);
        functions.push(if f.slow { sig.slow() } else { sig });
        if f.slow {
            // JS runs the slow ones off the worker's thread as `…Async`.
            let name = leak(vec![format!("{}Async", f.js)])[0].as_str();
            functions.push(
                Sig::js_only(
                    name,
                    params,
                    Ty::Promise(leak(vec![ret]).first().expect("ret")),
                    doc,
                )
                .slow(),
            );
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

const KV_VALUE: Ty = Ty::Union(&[Ty::Str, Ty::Num, Ty::Bool]);

/// kv: (name, result, doc).
const KV: &[(&str, Ty, &str)] = &[
    (
        "get",
        Ty::Opt(&KV_VALUE),
        "the value stored under the key, or nil/null",
    ),
    (
        "set",
        Ty::Nil,
        "store a value (string, number, boolean), with an optional ttl in seconds",
    ),
    (
        "add",
        Ty::Bool,
        "store a value only if the key is absent; whether it was stored",
    ),
    (
        "incr",
        Ty::Int,
        "add step (default 1) to an integer value (absent: 0) and return it",
    ),
    ("delete", Ty::Bool, "remove the key; whether it was there"),
    (
        "ttl",
        Ty::Opt(&Ty::Num),
        "seconds the key has left, or nil/null when absent or without expiry",
    ),
];

pub(super) fn kv() -> Module {
    let mut functions = Vec::new();
    for f in kv::FUNCTIONS {
        let (_, ret, doc) = *KV
            .iter()
            .find(|d| d.0 == f.name)
            .unwrap_or_else(|| panic!("api/tables.rs does not describe kv.{}", f.name));
        let params = leak(f.params.iter().map(|k| kv_param(*k)).collect());
        functions.push(Sig::both(f.name, params, ret, doc).slow());
        let name = leak(vec![format!("{}Async", f.name)])[0].as_str();
        let promised = leak(vec![ret]).first().expect("ret");
        functions.push(Sig::js_only(name, params, Ty::Promise(promised), doc).slow());
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
        let name = leak(vec![format!("{}Async", f.js)])[0].as_str();
        functions.push(Sig::js_only(name, params, Ty::Promise(&HTTP_RESPONSE), doc).slow());
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
    fn every_crypto_function_is_described_once() {
        assert_eq!(CRYPTO.len(), crypto::FUNCTIONS.len());
        for f in crypto::FUNCTIONS {
            assert_eq!(
                CRYPTO.iter().filter(|d| d.0 == f.lua).count(),
                1,
                "{}",
                f.lua
            );
        }
        assert_eq!(KV.len(), kv::FUNCTIONS.len());
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
