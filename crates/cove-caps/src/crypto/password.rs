//! Password hashing: PBKDF2-HMAC-SHA256, `pbkdf2:<iterations>:<salt hex>:<hash hex>`.

use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::primitives::random_bytes;
use super::{bytes, to_hex, ArgValue, CryptoResult, Out};

/// Hull's cost; stored hashes with fewer iterations are refused.
pub const PBKDF2_ITERATIONS: u32 = 100_000;
/// A stored hash asking for more is refused rather than burning the CPU.
const MAX_ITERATIONS: u32 = 10_000_000;

fn derive(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut out = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut out);
    out
}

/// A fresh random salt, Hull's format.
pub fn hash_password(password: &[u8]) -> String {
    let salt = random_bytes(16);
    let hash = derive(password, &salt, PBKDF2_ITERATIONS);
    format!(
        "pbkdf2:{PBKDF2_ITERATIONS}:{}:{}",
        to_hex(&salt),
        to_hex(&hash)
    )
}

/// Constant-time check; any malformed `stored` is simply `false`.
pub fn verify_password(password: &[u8], stored: &[u8]) -> bool {
    let Ok(stored) = std::str::from_utf8(stored) else {
        return false;
    };
    let mut parts = stored.split(':');
    let (Some("pbkdf2"), Some(iters), Some(salt), Some(hash), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    let Ok(iterations) = iters.parse::<u32>() else {
        return false;
    };
    if !(PBKDF2_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) || hash.len() != 64 {
        return false;
    }
    let (Ok(salt), Ok(hash)) = (hex::decode(salt), hex::decode(hash)) else {
        return false;
    };
    if salt.is_empty() {
        return false;
    }
    bool::from(derive(password, &salt, iterations).ct_eq(&hash[..]))
}

pub(super) fn hash_fn(a: &[ArgValue]) -> CryptoResult {
    Ok(Out::Str(hash_password(bytes(a, 0))))
}

pub(super) fn verify_fn(a: &[ArgValue]) -> CryptoResult {
    Ok(Out::Bool(verify_password(bytes(a, 0), bytes(a, 1))))
}
