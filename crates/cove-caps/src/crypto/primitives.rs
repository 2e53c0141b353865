//! Hashes, HMACs, random bytes and base64url.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};
use subtle::ConstantTimeEq;

use super::{bytes, hex_exact, to_hex, ArgValue, CryptoError, CryptoResult, Out};

pub(super) fn sha256(a: &[ArgValue]) -> CryptoResult {
    Ok(Out::Str(to_hex(&Sha256::digest(bytes(a, 0)))))
}

pub(super) fn sha512(a: &[ArgValue]) -> CryptoResult {
    Ok(Out::Str(to_hex(&Sha512::digest(bytes(a, 0)))))
}

/// `n` bytes from the operating system's generator.
pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    // getrandom fails only where the OS has no generator at all; a server
    // must not hand out predictable bytes, so that is fatal.
    getrandom::getrandom(&mut out).expect("the operating system's random generator failed");
    out
}

pub(super) fn random(a: &[ArgValue]) -> CryptoResult {
    match a.first() {
        Some(ArgValue::Int(n)) if (1..=65536).contains(n) => {
            Ok(Out::Bytes(random_bytes(*n as usize)))
        }
        _ => Err(CryptoError("random bytes must be 1-65536".into())),
    }
}

/// NaCl `crypto_auth`: HMAC-SHA512 truncated to 32 bytes.
fn auth_tag(msg: &[u8], key_hex: &[u8]) -> Result<[u8; 32], CryptoError> {
    let key = hex_exact(key_hex, 32, "key")?;
    let mut mac = Hmac::<Sha512>::new_from_slice(&key).map_err(|e| CryptoError(e.to_string()))?;
    mac.update(msg);
    let full = mac.finalize().into_bytes();
    let mut tag = [0u8; 32];
    tag.copy_from_slice(&full[..32]);
    Ok(tag)
}

pub(super) fn auth(a: &[ArgValue]) -> CryptoResult {
    Ok(Out::Str(to_hex(&auth_tag(bytes(a, 0), bytes(a, 1))?)))
}

pub(super) fn auth_verify(a: &[ArgValue]) -> CryptoResult {
    let tag = hex_exact(bytes(a, 0), 32, "tag")?;
    let expected = auth_tag(bytes(a, 1), bytes(a, 2))?;
    Ok(Out::Bool(bool::from(expected.ct_eq(&tag[..]))))
}

/// An HMAC key given as 2–256 hex chars (1–128 bytes).
fn hmac_key(key_hex: &[u8]) -> Result<Vec<u8>, CryptoError> {
    if key_hex.is_empty() || key_hex.len() > 256 || !key_hex.len().is_multiple_of(2) {
        return Err(CryptoError(
            "key must be 1-128 bytes (2-256 hex chars)".into(),
        ));
    }
    hex::decode(key_hex).map_err(|_| CryptoError("invalid hex in key".into()))
}

fn hmac256(data: &[u8], key_hex: &[u8]) -> Result<[u8; 32], CryptoError> {
    let key = hmac_key(key_hex)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|e| CryptoError(e.to_string()))?;
    mac.update(data);
    Ok(mac.finalize().into_bytes().into())
}

pub(super) fn hmac_sha256(a: &[ArgValue]) -> CryptoResult {
    Ok(Out::Str(to_hex(&hmac256(bytes(a, 0), bytes(a, 1))?)))
}

pub(super) fn hmac_sha256_verify(a: &[ArgValue]) -> CryptoResult {
    let actual = hmac256(bytes(a, 0), bytes(a, 1))?;
    // A malformed expected value simply does not match.
    let ok = hex_exact(bytes(a, 2), 32, "expected")
        .map(|e| bool::from(actual.ct_eq(&e[..])))
        .unwrap_or(false);
    Ok(Out::Bool(ok))
}

pub(super) fn base64url_encode(a: &[ArgValue]) -> CryptoResult {
    Ok(Out::Str(URL_SAFE_NO_PAD.encode(bytes(a, 0))))
}

/// Unpadded URL-safe base64; `=` padding or a dangling character is invalid.
pub(super) fn base64url_decode(a: &[ArgValue]) -> CryptoResult {
    Ok(Out::Text(URL_SAFE_NO_PAD.decode(bytes(a, 0)).ok()))
}

/// HMAC-SHA256 keyed with the secret's bytes as given (RFC 7518 §3.2), not hex.
fn hs256(data: &[u8], secret: &[u8]) -> Result<[u8; 32], CryptoError> {
    if secret.is_empty() {
        return Err(CryptoError("secret must not be empty".into()));
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).map_err(|e| CryptoError(e.to_string()))?;
    mac.update(data);
    Ok(mac.finalize().into_bytes().into())
}

/// `hs256_sign(data, secret)` → the unpadded base64url signature of a JWS.
pub(super) fn hs256_sign(a: &[ArgValue]) -> CryptoResult {
    Ok(Out::Str(
        URL_SAFE_NO_PAD.encode(hs256(bytes(a, 0), bytes(a, 1))?),
    ))
}

/// `hs256_verify(data, secret, signature)`: compared in constant time; a
/// signature that is not base64url of 32 bytes simply does not match.
pub(super) fn hs256_verify(a: &[ArgValue]) -> CryptoResult {
    let actual = hs256(bytes(a, 0), bytes(a, 1))?;
    let ok = URL_SAFE_NO_PAD
        .decode(bytes(a, 2))
        .map(|sig| bool::from(actual.ct_eq(&sig[..])))
        .unwrap_or(false);
    Ok(Out::Bool(ok))
}
