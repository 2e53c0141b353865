//! `crypto` (Hull §6.5): the 19 functions (and two Cove additions), declared once here with their
//! Lua and JS names; each binding registers from [`FUNCTIONS`] and only
//! converts arguments and results. Hex is lowercase; keys, nonces and
//! signatures travel as hex, data as bytes.

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

/// `f!(lua, js, [args], run [, js_lenient, slow] [; keys])`.
macro_rules! f {
    ($lua:literal, $js:literal, [$($a:expr),*], $run:expr) => {
        f!($lua, $js, [$($a),*], $run, None, false; Keys::None)
    };
    ($lua:literal, $js:literal, [$($a:expr),*], $run:expr; $keys:expr) => {
        f!($lua, $js, [$($a),*], $run, None, false; $keys)
    };
    ($lua:literal, $js:literal, [$($a:expr),*], $run:expr, $lenient:expr, $slow:expr) => {
        f!($lua, $js, [$($a),*], $run, $lenient, $slow; Keys::None)
    };
    ($lua:literal, $js:literal, [$($a:expr),*], $run:expr, $lenient:expr, $slow:expr; $keys:expr) => {
        CryptoFn {
            lua: $lua, js: $js, args: &[$($a),*], run: $run, js_lenient: $lenient, slow: $slow,
            keys: $keys,
        }
    };
}

/// Every crypto function, in Hull's order, then Cove's additions.
pub const FUNCTIONS: &[CryptoFn] = &[
    f!("sha256", "sha256", [B], primitives::sha256),
    f!("sha512", "sha512", [B], primitives::sha512),
    f!("random", "random", [I], primitives::random),
    f!(
        "hash_password",
        "hashPassword",
        [B],
        password::hash_fn,
        None,
        true
    ),
    f!(
        "verify_password",
        "verifyPassword",
        [B, B],
        password::verify_fn,
        None,
        true
    ),
    f!(
        "ed25519_keypair",
        "ed25519Keypair",
        [],
        nacl::ed25519_keypair;
        Keys::Made
    ),
    f!("ed25519_sign", "ed25519Sign", [B, B], nacl::ed25519_sign; Keys::Args(&[1])),
    f!(
        "ed25519_verify",
        "ed25519Verify",
        [B, B, B],
        nacl::ed25519_verify,
        Some(Out::Bool(false)),
        false;
        Keys::Args(&[2])
    ),
    f!("auth", "auth", [B, B], primitives::auth; Keys::Args(&[1])),
    f!(
        "auth_verify",
        "authVerify",
        [B, B, B],
        primitives::auth_verify;
        Keys::Args(&[2])
    ),
    f!("secretbox", "secretbox", [B, B, B], nacl::secretbox; Keys::Args(&[2])),
    f!(
        "secretbox_open",
        "secretboxOpen",
        [B, B, B],
        nacl::secretbox_open,
        Some(Out::Text(None)),
        false;
        Keys::Args(&[2])
    ),
    f!("box", "box", [B, B, B, B], nacl::seal; Keys::Args(&[2, 3])),
    f!(
        "box_open",
        "boxOpen",
        [B, B, B, B],
        nacl::open,
        Some(Out::Text(None)),
        false;
        Keys::Args(&[2, 3])
    ),
    f!("box_keypair", "boxKeypair", [], nacl::box_keypair; Keys::Made),
    f!(
        "hmac_sha256",
        "hmacSha256",
        [B, B],
        primitives::hmac_sha256;
        Keys::Args(&[1])
    ),
    f!(
        "hmac_sha256_verify",
        "hmacSha256Verify",
        [B, B, B],
        primitives::hmac_sha256_verify;
        Keys::Args(&[1])
    ),
    f!(
        "base64url_encode",
        "base64urlEncode",
        [B],
        primitives::base64url_encode
    ),
    f!(
        "base64url_decode",
        "base64urlDecode",
        [B],
        primitives::base64url_decode
    ),
    // Cove additions for hull.jwt: the JWS HS256 signature with the secret's
    // own bytes as key. Scripts cannot base64url raw MAC bytes in JS (strings
    // are UTF-8 there), which is what made Hull's JS tokens non-standard.
    f!("hs256_sign", "hs256Sign", [B, B], primitives::hs256_sign; Keys::Args(&[1])),
    f!(
        "hs256_verify",
        "hs256Verify",
        [B, B, B],
        primitives::hs256_verify;
        Keys::Args(&[1])
    ),
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
