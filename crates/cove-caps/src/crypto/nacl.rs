//! NaCl-compatible Ed25519 signatures, secretbox and box (dalek / RustCrypto).
//! Ciphertexts are hex of MAC ‖ ciphertext, as NaCl's combined mode.

use crypto_box::aead::Aead;
use crypto_box::{PublicKey, SalsaBox, SecretKey};
use crypto_secretbox::{KeyInit, XSalsa20Poly1305};
use ed25519_dalek::{Signer, SigningKey, Verifier, VerifyingKey};

use super::primitives::random_bytes;
use super::{bytes, hex_exact, to_hex, ArgValue, CryptoError, CryptoResult, Out};

fn array<const N: usize>(v: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(v);
    out
}

pub(super) fn ed25519_keypair(_: &[ArgValue]) -> CryptoResult {
    let seed: [u8; 32] = array(&random_bytes(32));
    let key = SigningKey::from_bytes(&seed);
    Ok(Out::KeyPair {
        public: to_hex(key.verifying_key().as_bytes()),
        // NaCl's 64-byte secret key: seed ‖ public key.
        secret: to_hex(&key.to_keypair_bytes()),
    })
}

pub(super) fn ed25519_sign(a: &[ArgValue]) -> CryptoResult {
    let sk = hex_exact(bytes(a, 1), 64, "secret key")?;
    let key = SigningKey::from_keypair_bytes(&array(&sk)).map_err(|_| {
        CryptoError(
            "secret key is not an Ed25519 key pair (seed followed by its public key)".into(),
        )
    })?;
    Ok(Out::Str(to_hex(&key.sign(bytes(a, 0)).to_bytes())))
}

pub(super) fn ed25519_verify(a: &[ArgValue]) -> CryptoResult {
    let sig = hex_exact(bytes(a, 1), 64, "signature")?;
    let pk = hex_exact(bytes(a, 2), 32, "public key")?;
    let Ok(key) = VerifyingKey::from_bytes(&array(&pk)) else {
        return Ok(Out::Bool(false));
    };
    let sig = ed25519_dalek::Signature::from_bytes(&array(&sig));
    Ok(Out::Bool(key.verify(bytes(a, 0), &sig).is_ok()))
}

fn nonce(a: &[ArgValue], i: usize) -> Result<[u8; 24], CryptoError> {
    Ok(array(&hex_exact(bytes(a, i), 24, "nonce")?))
}

fn secretbox_key(a: &[ArgValue], i: usize) -> Result<XSalsa20Poly1305, CryptoError> {
    let key = hex_exact(bytes(a, i), 32, "key")?;
    XSalsa20Poly1305::new_from_slice(&key).map_err(|e| CryptoError(e.to_string()))
}

fn sealed(result: Result<Vec<u8>, crypto_box::aead::Error>) -> CryptoResult {
    result
        .map(|ct| Out::Str(to_hex(&ct)))
        .map_err(|_| CryptoError("encryption failed".into()))
}

/// Hex ciphertext → bytes; bad hex is malformed input, not a failed opening.
fn ciphertext(a: &[ArgValue]) -> Result<Vec<u8>, CryptoError> {
    hex::decode(bytes(a, 0)).map_err(|_| CryptoError("invalid hex in ciphertext".into()))
}

pub(super) fn secretbox(a: &[ArgValue]) -> CryptoResult {
    let cipher = secretbox_key(a, 2)?;
    sealed(cipher.encrypt(&nonce(a, 1)?.into(), bytes(a, 0)))
}

pub(super) fn secretbox_open(a: &[ArgValue]) -> CryptoResult {
    let cipher = secretbox_key(a, 2)?;
    let n = nonce(a, 1)?;
    let ct = ciphertext(a)?;
    Ok(Out::Text(cipher.decrypt(&n.into(), &ct[..]).ok()))
}

fn salsa_box(a: &[ArgValue], pk: usize, sk: usize) -> Result<SalsaBox, CryptoError> {
    let pk = PublicKey::from(array::<32>(&hex_exact(bytes(a, pk), 32, "public key")?));
    let sk = SecretKey::from(array::<32>(&hex_exact(bytes(a, sk), 32, "secret key")?));
    Ok(SalsaBox::new(&pk, &sk))
}

pub(super) fn seal(a: &[ArgValue]) -> CryptoResult {
    let b = salsa_box(a, 2, 3)?;
    sealed(b.encrypt(&nonce(a, 1)?.into(), bytes(a, 0)))
}

pub(super) fn open(a: &[ArgValue]) -> CryptoResult {
    let b = salsa_box(a, 2, 3)?;
    let n = nonce(a, 1)?;
    let ct = ciphertext(a)?;
    Ok(Out::Text(b.decrypt(&n.into(), &ct[..]).ok()))
}

pub(super) fn box_keypair(_: &[ArgValue]) -> CryptoResult {
    let sk = SecretKey::from(array::<32>(&random_bytes(32)));
    Ok(Out::KeyPair {
        public: to_hex(sk.public_key().as_bytes()),
        secret: to_hex(&sk.to_bytes()),
    })
}
