//! Known-answer tests (FIPS 180, RFC 4231, RFC 7914 §11, RFC 8032 §7.1) and
//! NaCl secretbox/box/auth vectors produced with libsodium (PyNaCl 1.6.2,
//! key = 00..1f, nonce = 00..17, message "hello, cove"; box keys from
//! secret scalars 01×32 and 02×32).

use super::*;

fn call(name: &str, args: &[&[u8]]) -> CryptoResult {
    let f = FUNCTIONS.iter().find(|f| f.lua == name).expect(name);
    let args: Vec<ArgValue> = args.iter().map(|a| ArgValue::Bytes(a.to_vec())).collect();
    (f.run)(&args)
}

fn s(name: &str, args: &[&[u8]]) -> String {
    match call(name, args) {
        Ok(Out::Str(s)) => s,
        other => panic!("{name}: {other:?}"),
    }
}

fn b(name: &str, args: &[&[u8]]) -> bool {
    match call(name, args) {
        Ok(Out::Bool(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

fn text(name: &str, args: &[&[u8]]) -> Option<Vec<u8>> {
    match call(name, args) {
        Ok(Out::Text(v)) => v,
        other => panic!("{name}: {other:?}"),
    }
}

const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const NONCE: &str = "000102030405060708090a0b0c0d0e0f1011121314151617";
const MSG: &[u8] = b"hello, cove";

#[test]
fn every_hull_function_is_declared_once_with_both_names() {
    // Hull's 19, then Cove's hs256_sign and hs256_verify.
    assert_eq!(FUNCTIONS.len(), 21);
    let mut lua: Vec<_> = FUNCTIONS.iter().map(|f| f.lua).collect();
    lua.sort_unstable();
    lua.dedup();
    assert_eq!(lua.len(), 21);
}

/// RFC 7515 Appendix A.1: the JWS HS256 example (key from its JWK `k`).
#[test]
fn hs256_matches_rfc_7515() {
    use base64::Engine as _;
    let key = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(
            "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow",
        )
        .unwrap();
    let input = b"eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.\
eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ";
    let sig = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    assert_eq!(s("hs256_sign", &[input, &key]), sig);
    assert!(b("hs256_verify", &[input, &key, sig.as_bytes()]));
    assert!(!b("hs256_verify", &[b"other", &key, sig.as_bytes()]));
    // Not base64url, padded, or of the wrong length: no match, no error.
    for bad in [
        "",
        "dBjf!",
        "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk=",
        "dBjf",
    ] {
        assert!(!b("hs256_verify", &[input, &key, bad.as_bytes()]), "{bad}");
    }
    assert!(call("hs256_sign", &[input, b""]).is_err(), "empty secret");
}

#[test]
fn sha2_vectors() {
    assert_eq!(
        s("sha256", &[b"abc"]),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        s("sha512", &[b"abc"]),
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
         2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
    );
}

#[test]
fn hmac_sha256_rfc4231_case_2() {
    let key = hex::encode("Jefe");
    let tag = s(
        "hmac_sha256",
        &[b"what do ya want for nothing?", key.as_bytes()],
    );
    assert_eq!(
        tag,
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
    assert!(b(
        "hmac_sha256_verify",
        &[
            b"what do ya want for nothing?",
            key.as_bytes(),
            tag.as_bytes()
        ]
    ));
    assert!(!b(
        "hmac_sha256_verify",
        &[b"other", key.as_bytes(), tag.as_bytes()]
    ));
    assert!(!b("hmac_sha256_verify", &[b"x", key.as_bytes(), b"zz"]));
    let err = call("hmac_sha256", &[b"x", b""]).unwrap_err();
    assert_eq!(err.0, "key must be 1-128 bytes (2-256 hex chars)");
    let err = call("hmac_sha256", &[b"x", b"zz"]).unwrap_err();
    assert_eq!(err.0, "invalid hex in key");
}

#[test]
fn pbkdf2_rfc7914_vector_and_hulls_format() {
    let mut out = [0u8; 64];
    pbkdf2::pbkdf2_hmac::<sha2::Sha256>(b"passwd", b"salt", 1, &mut out);
    assert_eq!(
        hex::encode(out),
        "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc\
         49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
    );
    // Computed with Python's hashlib.pbkdf2_hmac('sha256', b'hunter2', bytes(range(16)), 100000).
    let stored = "pbkdf2:100000:000102030405060708090a0b0c0d0e0f:\
                  844d6e092def956a3d2773e41d721bf2d95a1d8f524d970ca76cd20528a03679";
    assert!(verify_password(b"hunter2", stored.as_bytes()));
    assert!(!verify_password(b"hunter3", stored.as_bytes()));
    let fresh = hash_password(b"pw");
    let parts: Vec<&str> = fresh.split(':').collect();
    assert_eq!(
        (parts[0], parts[1], parts[2].len(), parts[3].len()),
        ("pbkdf2", "100000", 32, 64)
    );
    assert!(verify_password(b"pw", fresh.as_bytes()));
    assert_ne!(fresh, hash_password(b"pw"), "salts are random");
    for bad in [
        "",
        "pbkdf2:100000:00:zz",
        "pbkdf2:99999:000102030405060708090a0b0c0d0e0f:844d6e092def956a3d2773e41d721bf2d95a1d8f524d970ca76cd20528a03679",
        "pbkdf2:999999999:00:844d6e092def956a3d2773e41d721bf2d95a1d8f524d970ca76cd20528a03679",
        "bcrypt:100000:00:00",
    ] {
        assert!(!verify_password(b"hunter2", bad.as_bytes()), "{bad}");
    }
}

#[test]
fn ed25519_rfc8032_tests_1_and_2() {
    let cases = [
        (
            "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            &b""[..],
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
        ),
        (
            "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
            "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            &[0x72u8][..],
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
        ),
    ];
    for (seed, pk, msg, sig) in cases {
        let sk = format!("{seed}{pk}");
        assert_eq!(s("ed25519_sign", &[msg, sk.as_bytes()]), sig);
        assert!(b("ed25519_verify", &[msg, sig.as_bytes(), pk.as_bytes()]));
        assert!(!b(
            "ed25519_verify",
            &[b"tampered", sig.as_bytes(), pk.as_bytes()]
        ));
    }
    let err = call("ed25519_sign", &[b"x", b"00"]).unwrap_err();
    assert_eq!(err.0, "secret key must be 128 hex chars (64 bytes)");
    let err = call("ed25519_verify", &[b"x", b"00", b"00"]).unwrap_err();
    assert_eq!(err.0, "signature must be 128 hex chars (64 bytes)");
}

#[test]
fn keypairs_round_trip() {
    let Ok(Out::KeyPair { public, secret }) = call("ed25519_keypair", &[]) else {
        panic!("keypair")
    };
    assert_eq!((public.len(), secret.len()), (64, 128));
    assert!(secret.ends_with(&public));
    let sig = s("ed25519_sign", &[MSG, secret.as_bytes()]);
    assert!(b(
        "ed25519_verify",
        &[MSG, sig.as_bytes(), public.as_bytes()]
    ));

    let Ok(Out::KeyPair {
        public: pa,
        secret: sa,
    }) = call("box_keypair", &[])
    else {
        panic!("box keypair")
    };
    let Ok(Out::KeyPair {
        public: pb,
        secret: sb,
    }) = call("box_keypair", &[])
    else {
        panic!("box keypair")
    };
    let ct = s(
        "box",
        &[MSG, NONCE.as_bytes(), pb.as_bytes(), sa.as_bytes()],
    );
    let opened = text(
        "box_open",
        &[
            ct.as_bytes(),
            NONCE.as_bytes(),
            pa.as_bytes(),
            sb.as_bytes(),
        ],
    );
    assert_eq!(opened.as_deref(), Some(MSG));
}

#[test]
fn secretbox_matches_libsodium() {
    let ct = s("secretbox", &[MSG, NONCE.as_bytes(), KEY.as_bytes()]);
    assert_eq!(ct, "6c6e8a40d7976fd1a84e0706b6211683369a5423a8e68273d44aea");
    assert_eq!(
        text(
            "secretbox_open",
            &[ct.as_bytes(), NONCE.as_bytes(), KEY.as_bytes()]
        )
        .as_deref(),
        Some(MSG)
    );
    let mut bad = ct.clone().into_bytes();
    bad[0] = if bad[0] == b'0' { b'1' } else { b'0' };
    assert_eq!(
        text("secretbox_open", &[&bad, NONCE.as_bytes(), KEY.as_bytes()]),
        None
    );
    let err = call("secretbox", &[MSG, b"00", KEY.as_bytes()]).unwrap_err();
    assert_eq!(err.0, "nonce must be 48 hex chars (24 bytes)");
}

#[test]
fn box_matches_libsodium() {
    let sk_a = "01".repeat(32);
    let sk_b = "02".repeat(32);
    let pk_a = "a4e09292b651c278b9772c569f5fa9bb13d906b46ab68c9df9dc2b4409f8a209";
    let pk_b = "ce8d3ad1ccb633ec7b70c17814a5c76ecd029685050d344745ba05870e587d59";
    let ct = s(
        "box",
        &[MSG, NONCE.as_bytes(), pk_b.as_bytes(), sk_a.as_bytes()],
    );
    assert_eq!(ct, "35ed97beb04b7488ea539737ef31b1dd8aaaefaff51dc655d6201d");
    let opened = text(
        "box_open",
        &[
            ct.as_bytes(),
            NONCE.as_bytes(),
            pk_a.as_bytes(),
            sk_b.as_bytes(),
        ],
    );
    assert_eq!(opened.as_deref(), Some(MSG));
}

#[test]
fn auth_is_hmac_sha512_256() {
    let tag = s("auth", &[MSG, KEY.as_bytes()]);
    assert_eq!(
        tag,
        "787a2e42ed6fde844700989708aec457655e44b487fad9a6017822c28186c3fc"
    );
    assert!(b("auth_verify", &[tag.as_bytes(), MSG, KEY.as_bytes()]));
    assert!(!b(
        "auth_verify",
        &[tag.as_bytes(), b"other", KEY.as_bytes()]
    ));
}

#[test]
fn base64url_without_padding() {
    assert_eq!(s("base64url_encode", &[b"\xfb\xff?"]), "-_8_");
    assert_eq!(s("base64url_encode", &[b"ab"]), "YWI");
    assert_eq!(
        text("base64url_decode", &[b"YWI"]).as_deref(),
        Some(&b"ab"[..])
    );
    assert_eq!(text("base64url_decode", &[b"YWI="]), None);
    assert_eq!(text("base64url_decode", &[b"Y"]), None);
    assert_eq!(text("base64url_decode", &[b"a+b/"]), None);
}

#[test]
fn random_sizes_and_js_leniency() {
    let f = FUNCTIONS
        .iter()
        .find(|f| f.lua == "random")
        .expect("random");
    match (f.run)(&[ArgValue::Int(16)]) {
        Ok(Out::Bytes(v)) => assert_eq!(v.len(), 16),
        other => panic!("{other:?}"),
    }
    for n in [0, 65537, -1] {
        let err = (f.run)(&[ArgValue::Int(n)]).unwrap_err();
        assert_eq!(err.0, "random bytes must be 1-65536");
    }
    let open = FUNCTIONS
        .iter()
        .find(|f| f.js == "secretboxOpen")
        .expect("open");
    let err = CryptoError("nonce must be 48 hex chars (24 bytes)".into());
    assert_eq!(open.js_fallback(err.clone()), Ok(Out::Text(None)));
    assert_eq!(f.js_fallback(err.clone()), Err(err));
}
