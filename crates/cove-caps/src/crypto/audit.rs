//! The audit lines of crypto calls that use a key (`crypto`): the function
//! and a fingerprint of each key, never the key. A fingerprint is the first
//! 8 bytes of HMAC-SHA-256 of the key (as the script passed it) under a
//! random salt made once per process: the same key shows the same
//! fingerprint for as long as the server runs, and the log gives no way to
//! test guesses at a weak key (a plain hash of a JWT secret would).

use std::sync::OnceLock;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use cove_core::audit::Event;

use super::primitives::random_bytes;
use super::{bytes, to_hex, ArgValue, CryptoFn, CryptoResult, Keys, Out};

fn salt() -> &'static [u8] {
    static SALT: OnceLock<Vec<u8>> = OnceLock::new();
    SALT.get_or_init(|| random_bytes(32))
}

/// 16 hex characters that name `key` within this process.
pub(crate) fn fingerprint(key: &[u8]) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(salt()) else {
        return String::new(); // HMAC takes a key of any length.
    };
    mac.update(key);
    to_hex(&mac.finalize().into_bytes()[..8])
}

/// Log a call of `f` with `args` that gave `out`.
pub(super) fn used(f: &CryptoFn, args: &[ArgValue], out: &CryptoResult) {
    let keys: Vec<String> = match (f.keys, out) {
        (Keys::Args(at), _) => at.iter().map(|&i| fingerprint(bytes(args, i))).collect(),
        (Keys::Made, Ok(Out::KeyPair { secret, .. })) => vec![fingerprint(secret.as_bytes())],
        _ => Vec::new(),
    };
    Event::new("crypto")
        .str("fn", f.lua)
        .strs("keys", keys.iter().map(String::as_str))
        .str("result", if out.is_ok() { "ok" } else { "error" })
        .emit();
}

#[cfg(test)]
mod tests {
    use super::super::{Arg, FUNCTIONS};
    use super::*;

    #[test]
    fn a_fingerprint_names_a_key_without_showing_it() {
        let key = b"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        let fp = fingerprint(key);
        assert_eq!(fp.len(), 16);
        assert!(fp.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(fingerprint(key), fp, "stable within the process");
        assert_ne!(fingerprint(b"another key"), fp);
        assert!(!String::from_utf8_lossy(key).contains(&fp));
    }

    #[test]
    fn key_positions_name_byte_arguments() {
        let mut keyed = 0;
        for f in FUNCTIONS {
            if let Keys::Args(at) = f.keys {
                keyed += 1;
                for &i in at {
                    assert_eq!(f.args.get(i), Some(&Arg::Bytes), "{}", f.lua);
                }
            }
        }
        // sign/verify, auth, secretbox, box, hmac and hs256, each both ways.
        assert_eq!(keyed, 12);
    }
}
