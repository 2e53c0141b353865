//! Signed builds: `cove keygen`, `cove build --sign`, `cove inspect` and
//! `--verify-sig` (Hull §11.5, reworked for one-file executables).
//!
//! A signed executable carries two entries at the end of its tar archive
//! (format in `pack.rs`):
//!
//! * `.cove/signed.json`, the statement: the app's name, the SHA-256 and
//!   size of the `cove` binary part (every byte before the archive), of
//!   each packed file by path in the pack's order, and the manifest the app
//!   declared when loaded at build time;
//! * `.cove/signature.json`: `{"algorithm": "ed25519", "public_key": hex,
//!   "signature": hex}`, the Ed25519 signature over the exact bytes of
//!   `.cove/signed.json`.
//!
//! Verifying hashes the binary part once, streaming, checks the signature
//! and compares each part, so a refusal can say which part does not match.
//! Key files are Hull's: NAME.pub is 64 hex digits, NAME.key 128 (the NaCl
//! secret key: seed, then public key).

mod check;
mod keys;
mod manifest;
mod report;
mod statement;

use std::io::{self, Read};

use sha2::{Digest, Sha256};

pub use check::{unbuilt, verify_at_start};
pub use keys::{fingerprint, key_paths, keygen, read_secret};
pub use manifest::{declared_manifest, SignedManifest};
pub use report::inspect;
pub use statement::seal_for;

/// Archive entry holding the signed statement.
pub const STATEMENT_ENTRY: &str = ".cove/signed.json";
/// Archive entry holding the signature over the statement.
pub const SIGNATURE_ENTRY: &str = ".cove/signature.json";

/// SHA-256 of the first `len` bytes `reader` gives, read in 64 KiB pieces.
/// Fewer bytes than `len` is an error.
pub fn sha256_prefix(reader: &mut impl Read, len: u64) -> io::Result<[u8; 32]> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut left = len;
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = reader.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("ended {left} bytes early"),
            ));
        }
        hasher.update(&buf[..n]);
        left -= n as u64;
    }
    Ok(hasher.finalize().into())
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_hash_reads_exactly_len_bytes() {
        let data = vec![7u8; 200_000];
        let got = sha256_prefix(&mut &data[..], 150_000).unwrap();
        assert_eq!(hex::encode(got), sha256_hex(&data[..150_000]));
        let err = sha256_prefix(&mut &data[..10], 11).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        // FIPS 180-2 "abc".
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
