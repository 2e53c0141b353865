//! `crypto` (Hull §6.5): the 19 functions (and two Cove additions), declared once here with their
//! Lua and JS names; each binding registers from [`FUNCTIONS`] and only
//! converts arguments and results. Hex is lowercase; keys, nonces and
//! signatures travel as hex, data as bytes.

use crate::sig::Ty;

mod audit;
mod nacl;
mod password;
mod primitives;
#[cfg(test)]
mod tests;

pub use password::{hash_password, verify_password, PBKDF2_ITERATIONS};

/// An argument a crypto function takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// Data or hex text: a Lua (byte) string; in JS a string (UTF-8) or bytes.
    Bytes,
    /// A count (`random(n)`).
    Int,
}

/// An argument value, converted by the binding.
#[derive(Debug, Clone)]
pub enum ArgValue {
    Bytes(Vec<u8>),
    Int(i64),
}

/// What a crypto function returns; each binding maps the kinds to its language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// A text result (hex, base64url, `pbkdf2:…`).
    Str(String),
    /// Raw random bytes: a Lua string, a JS `ArrayBuffer`.
    Bytes(Vec<u8>),
    /// Decrypted or decoded bytes, or `None` when they do not authenticate /
    /// decode: a Lua string or nil; in JS a UTF-8 string or null.
    Text(Option<Vec<u8>>),
    Bool(bool),
    /// Lua returns two values (public, secret); JS `{publicKey, secretKey}`.
    KeyPair {
        public: String,
        secret: String,
    },
}

/// A wrong key length, bad hex or out-of-range count (`crypto.input`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CryptoError(pub String);

impl CryptoError {
    pub fn code(&self) -> &'static str {
        "crypto.input"
    }

    /// As scripts see it, with its code.
    pub fn cap(&self) -> cove_core::CapError {
        cove_core::CapError::new(self.code(), self.0.clone())
    }
}

pub type CryptoResult = Result<Out, CryptoError>;

/// The keys a function uses, for the audit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// None (hashes, random bytes, encodings, passwords).
    None,
    /// The arguments at these positions (0-based) are keys.
    Args(&'static [usize]),
    /// It makes a key pair.
    Made,
}

/// One script-facing function.
pub struct CryptoFn {
    pub lua: &'static str,
    pub js: &'static str,
    pub args: &'static [Arg],
    /// The arguments' names, in the docs and editor types.
    pub names: &'static [&'static str],
    /// What it returns (in Lua; JS where `Out` maps differently, see api/tables.rs).
    pub ret: Ty,
    /// One line for the docs.
    pub doc: &'static str,
    pub run: fn(&[ArgValue]) -> CryptoResult,
    /// Hull's JS answers this (`false`/`null`) where Lua raises on malformed input.
    pub js_lenient: Option<Out>,
    /// Costs tens of milliseconds (PBKDF2): run off the worker's thread when the runtime can.
    pub slow: bool,
    /// With the audit log on, calls that use keys are logged (crypto/audit.rs).
    pub keys: Keys,
}

impl CryptoFn {
    /// Run it; an error names the function as the script called it
    /// (`crypto.secretbox: nonce must be …`).
    pub fn call(&self, args: &[ArgValue], called_as: &str) -> CryptoResult {
        let out = (self.run)(args).map_err(|e| CryptoError(format!("crypto.{called_as}: {e}")));
        if self.keys != Keys::None && cove_core::audit::enabled() {
            audit::used(self, args, &out);
        }
        out
    }

    /// What JS returns instead of raising on malformed input, as Hull's JS does.
    pub fn js_fallback(&self, err: CryptoError) -> CryptoResult {
        self.js_lenient.clone().ok_or(err)
    }
}

use Arg::{Bytes as B, Int as I};

const HEX: Ty = Ty::Str;
const KEY_PAIR: Ty = Ty::Named("KeyPair");
const TEXT_OR_NIL: Ty = Ty::Opt(&Ty::Str);

/// `f!(lua, js, [Kind "name", …] -> result, "doc", run [, lenient OUT] [, slow] [, keys KEYS])`.
macro_rules! f {
    ($lua:literal, $js:literal, [$($a:ident $n:literal),*] -> $ret:expr, $doc:literal, $run:expr
     $(, lenient $l:expr)? $(, slow $s:literal)? $(, keys $k:expr)?) => {
        CryptoFn {
            lua: $lua,
            js: $js,
            args: &[$($a),*],
            names: &[$($n),*],
            ret: $ret,
            doc: $doc,
            run: $run,
            js_lenient: f!(@or $(Some($l))?; None),
            slow: f!(@or $($s)?; false),
            keys: f!(@or $($k)?; Keys::None),
        }
    };
    (@or ; $default:expr) => { $default };
    (@or $given:expr; $default:expr) => { $given };
}

/// Every crypto function, in Hull's order, then Cove's additions.
pub const FUNCTIONS: &[CryptoFn] = &[
    f!("sha256", "sha256", [B "data"] -> HEX,
        "SHA-256 of the data, as 64 hex chars", primitives::sha256),
    f!("sha512", "sha512", [B "data"] -> HEX,
        "SHA-512 of the data, as 128 hex chars", primitives::sha512),
    f!("random", "random", [I "n"] -> Ty::Bytes,
        "n random bytes (1-65536)", primitives::random),
    f!("hash_password", "hashPassword", [B "password"] -> Ty::Str,
        "a PBKDF2-HMAC-SHA256 hash to store: \"pbkdf2:100000:<salt>:<hash>\"",
        password::hash_fn, slow true),
    f!("verify_password", "verifyPassword", [B "password", B "stored"] -> Ty::Bool,
        "whether the password matches a stored hash (constant time)",
        password::verify_fn, slow true),
    f!("ed25519_keypair", "ed25519Keypair", [] -> KEY_PAIR,
        "a new Ed25519 key pair, hex (Lua: two results)",
        nacl::ed25519_keypair, keys Keys::Made),
    f!("ed25519_sign", "ed25519Sign", [B "data", B "secret_key"] -> HEX,
        "the Ed25519 signature of the data, 128 hex chars",
        nacl::ed25519_sign, keys Keys::Args(&[1])),
    f!("ed25519_verify", "ed25519Verify", [B "data", B "signature", B "public_key"] -> Ty::Bool,
        "whether the signature is the key's signature of the data",
        nacl::ed25519_verify, lenient Out::Bool(false), keys Keys::Args(&[2])),
    f!("auth", "auth", [B "message", B "key"] -> HEX,
        "NaCl crypto_auth (HMAC-SHA512/256) tag, 64 hex chars; key 32 bytes hex",
        primitives::auth, keys Keys::Args(&[1])),
    f!("auth_verify", "authVerify", [B "tag", B "message", B "key"] -> Ty::Bool,
        "whether the tag authenticates the message",
        primitives::auth_verify, keys Keys::Args(&[2])),
    f!("secretbox", "secretbox", [B "message", B "nonce", B "key"] -> HEX,
        "XSalsa20-Poly1305 sealed message (hex); nonce 24 bytes, key 32, both hex",
        nacl::secretbox, keys Keys::Args(&[2])),
    f!("secretbox_open", "secretboxOpen", [B "sealed", B "nonce", B "key"] -> TEXT_OR_NIL,
        "the opened message, or nil/null if it does not authenticate",
        nacl::secretbox_open, lenient Out::Text(None), keys Keys::Args(&[2])),
    f!("box", "box", [B "message", B "nonce", B "public_key", B "secret_key"] -> HEX,
        "NaCl box (Curve25519-XSalsa20-Poly1305) sealed message, hex",
        nacl::seal, keys Keys::Args(&[2, 3])),
    f!("box_open", "boxOpen", [B "sealed", B "nonce", B "public_key", B "secret_key"] -> TEXT_OR_NIL,
        "the opened box, or nil/null if it does not authenticate",
        nacl::open, lenient Out::Text(None), keys Keys::Args(&[2, 3])),
    f!("box_keypair", "boxKeypair", [] -> KEY_PAIR,
        "a new Curve25519 key pair for box, hex (Lua: two results)",
        nacl::box_keypair, keys Keys::Made),
    f!("hmac_sha256", "hmacSha256", [B "data", B "key"] -> HEX,
        "HMAC-SHA256 of the data with a hex key, 64 hex chars",
        primitives::hmac_sha256, keys Keys::Args(&[1])),
    f!("hmac_sha256_verify", "hmacSha256Verify", [B "data", B "key", B "expected"] -> Ty::Bool,
        "whether the HMAC matches (constant time)",
        primitives::hmac_sha256_verify, keys Keys::Args(&[1])),
    f!("base64url_encode", "base64urlEncode", [B "data"] -> Ty::Str,
        "URL-safe base64 without padding", primitives::base64url_encode),
    f!("base64url_decode", "base64urlDecode", [B "text"] -> TEXT_OR_NIL,
        "the decoded bytes (JS: as UTF-8 text), or nil/null if invalid",
        primitives::base64url_decode),
    // Cove additions for hull.jwt: the JWS HS256 signature with the secret's
    // own bytes as key. Scripts cannot base64url raw MAC bytes in JS (strings
    // are UTF-8 there), which is what made Hull's JS tokens non-standard.
    f!("hs256_sign", "hs256Sign", [B "data", B "secret"] -> Ty::Str,
        "JWT HS256 signature: base64url HMAC-SHA256 keyed with the secret's bytes",
        primitives::hs256_sign, keys Keys::Args(&[1])),
    f!("hs256_verify", "hs256Verify", [B "data", B "secret", B "signature"] -> Ty::Bool,
        "whether a JWT HS256 signature matches (constant time)",
        primitives::hs256_verify, keys Keys::Args(&[1])),
];

/// The `i`th argument as bytes (bindings check kinds; this is for the functions).
pub(crate) fn bytes(args: &[ArgValue], i: usize) -> &[u8] {
    match args.get(i) {
        Some(ArgValue::Bytes(b)) => b,
        _ => &[],
    }
}

/// Decode hex of exactly `len` bytes, naming what it is in the error.
pub(crate) fn hex_exact(text: &[u8], len: usize, what: &str) -> Result<Vec<u8>, CryptoError> {
    if text.len() != len * 2 {
        return Err(CryptoError(format!(
            "{what} must be {} hex chars ({len} bytes)",
            len * 2
        )));
    }
    hex::decode(text).map_err(|_| CryptoError(format!("invalid hex in {what}")))
}

/// Lowercase hex.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}
