//! What a signature covers (`.cove/signed.json`) and the signature itself
//! (`.cove/signature.json`): writing both at build time, reading them back.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Result};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{sha256_hex, SIGNATURE_ENTRY, STATEMENT_ENTRY};
use crate::pack::{CovePart, Meta};

/// The `format` of every statement this Cove writes and reads.
pub const FORMAT: &str = "cove-signed-build/1";

/// The signed statement. Field order is the order written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    pub format: String,
    /// The app's name (`.cove/name`): the built file's `--version` and `--help` show it.
    pub app: String,
    /// The Cove that built it, for people; `binary` is what is checked.
    pub cove_version: String,
    /// The `cove` part of the file: every byte before the archive.
    pub binary: Digest,
    /// Every packed file, in the pack's order (paths by byte order).
    pub files: Vec<FileDigest>,
    /// What `app.manifest(...)` declared at build time (keys sorted), or null.
    pub manifest: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Digest {
    pub size: u64,
    pub sha256: String,
}

impl Digest {
    pub fn of(bytes: &[u8]) -> Digest {
        Digest {
            size: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        }
    }

    pub fn of_part(part: &CovePart) -> Digest {
        Digest {
            size: part.len,
            sha256: hex::encode(part.sha256),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDigest {
    pub path: String,
    pub size: u64,
    pub sha256: String,
}

/// The signature entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    pub algorithm: String,
    pub public_key: String,
    pub signature: String,
}

/// Every file's digest, in the pack's order.
pub fn file_digests(files: &BTreeMap<String, Vec<u8>>) -> Vec<FileDigest> {
    files
        .iter()
        .map(|(path, bytes)| {
            let d = Digest::of(bytes);
            FileDigest {
                path: path.clone(),
                size: d.size,
                sha256: d.sha256,
            }
        })
        .collect()
}

/// A JSON value with every object's keys sorted, so a manifest reads the
/// same whichever order the script built it in.
pub fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

impl Statement {
    pub fn new(
        app: &str,
        binary: Digest,
        files: &BTreeMap<String, Vec<u8>>,
        manifest: Option<&Value>,
    ) -> Statement {
        Statement {
            format: FORMAT.to_string(),
            app: app.to_string(),
            cove_version: env!("CARGO_PKG_VERSION").to_string(),
            binary,
            files: file_digests(files),
            manifest: manifest.map(sorted),
        }
    }

    /// The exact bytes signed and stored: pretty JSON, then a newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("a statement serializes");
        out.push(b'\n');
        out
    }
}

/// The seal `cove build --sign` hands to `pack::write_exe_sealed`: the
/// statement for `name`, `files` and `manifest` plus the `cove` part it is
/// given, and its signature by `key`.
pub fn seal_for<'a>(
    key: &'a SigningKey,
    name: &'a str,
    files: &'a BTreeMap<String, Vec<u8>>,
    manifest: Option<&'a Value>,
) -> impl Fn(&CovePart) -> Result<Vec<(String, Vec<u8>)>> + 'a {
    move |part| {
        let statement = Statement::new(name, Digest::of_part(part), files, manifest).to_bytes();
        let envelope = Envelope {
            algorithm: "ed25519".to_string(),
            public_key: hex::encode(key.verifying_key().as_bytes()),
            signature: hex::encode(key.sign(&statement).to_bytes()),
        };
        let mut envelope_bytes = serde_json::to_vec_pretty(&envelope)?;
        envelope_bytes.push(b'\n');
        Ok(vec![
            (STATEMENT_ENTRY.to_string(), statement),
            (SIGNATURE_ENTRY.to_string(), envelope_bytes),
        ])
    }
}

/// The signature entries of a built file, as found.
pub enum Found<'a> {
    Unsigned,
    Signed {
        statement: &'a [u8],
        envelope: &'a [u8],
    },
}

pub fn find(meta: &Meta) -> Result<Found<'_>> {
    match (meta.get(STATEMENT_ENTRY), meta.get(SIGNATURE_ENTRY)) {
        (None, None) => Ok(Found::Unsigned),
        (Some(statement), Some(envelope)) => Ok(Found::Signed {
            statement,
            envelope,
        }),
        (Some(_), None) => bail!("{SIGNATURE_ENTRY} is missing (the signature was cut out)"),
        (None, Some(_)) => bail!("{STATEMENT_ENTRY} is missing (the signed statement was cut out)"),
    }
}

/// The envelope's public key and signature, checked for form.
pub fn parse_envelope(bytes: &[u8]) -> Result<(VerifyingKey, Signature)> {
    let env: Envelope =
        serde_json::from_slice(bytes).map_err(|e| anyhow!("{SIGNATURE_ENTRY} is damaged: {e}"))?;
    if env.algorithm != "ed25519" {
        bail!(
            "{SIGNATURE_ENTRY} names the algorithm {:?}; this Cove checks ed25519 only",
            env.algorithm
        );
    }
    let key: [u8; 32] = hex::decode(&env.public_key)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| anyhow!("{SIGNATURE_ENTRY}: public_key is not 64 hex digits"))?;
    let sig: [u8; 64] = hex::decode(&env.signature)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| anyhow!("{SIGNATURE_ENTRY}: signature is not 128 hex digits"))?;
    let key = VerifyingKey::from_bytes(&key)
        .map_err(|_| anyhow!("{SIGNATURE_ENTRY}: public_key is not an Ed25519 key"))?;
    Ok((key, Signature::from_bytes(&sig)))
}

/// Whether `sig` by `key` signs exactly `statement`.
pub fn signs(key: &VerifyingKey, sig: &Signature, statement: &[u8]) -> bool {
    key.verify(statement, sig).is_ok()
}

pub fn parse_statement(bytes: &[u8]) -> Result<Statement> {
    let st: Statement = serde_json::from_slice(bytes)
        .map_err(|e| anyhow!("{STATEMENT_ENTRY} cannot be read: {e}"))?;
    if st.format != FORMAT {
        bail!(
            "{STATEMENT_ENTRY} is in format {:?}; this Cove reads {FORMAT:?} (check it with the \
             Cove that built it)",
            st.format
        );
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> BTreeMap<String, Vec<u8>> {
        let mut f = BTreeMap::new();
        f.insert("app.lua".to_string(), b"x".to_vec());
        f.insert("static/a.css".to_string(), b"body{}".to_vec());
        f
    }

    #[test]
    fn the_seal_signs_the_statement_it_stores() {
        let key = SigningKey::from_bytes(&[3; 32]);
        let files = files();
        let manifest = serde_json::json!({"hosts": ["a.com"], "env": ["K"]});
        let seal = seal_for(&key, "demo", &files, Some(&manifest));
        let part = CovePart {
            len: 5,
            sha256: [1; 32],
        };
        let mut meta = Meta::new();
        meta.extend(seal(&part).unwrap());
        let Found::Signed {
            statement,
            envelope,
        } = find(&meta).unwrap()
        else {
            panic!("signed")
        };
        let (pk, sig) = parse_envelope(envelope).unwrap();
        assert_eq!(pk, key.verifying_key());
        assert!(signs(&pk, &sig, statement));
        let mut altered = statement.to_vec();
        altered[10] ^= 1;
        assert!(!signs(&pk, &sig, &altered));

        let st = parse_statement(statement).unwrap();
        assert_eq!(st.app, "demo");
        assert_eq!(st.binary.size, 5);
        assert_eq!(st.binary.sha256, "01".repeat(32));
        let paths: Vec<&str> = st.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["app.lua", "static/a.css"]);
        assert_eq!(st.files[1].sha256, sha256_hex(b"body{}"));
        // Keys sorted: the manifest reads the same from Lua and JS.
        let text = serde_json::to_string(&st.manifest).unwrap();
        assert_eq!(text, r#"{"env":["K"],"hosts":["a.com"]}"#);
    }

    #[test]
    fn half_a_signature_and_other_formats_are_errors() {
        let mut meta = Meta::new();
        assert!(matches!(find(&meta).unwrap(), Found::Unsigned));
        meta.insert(STATEMENT_ENTRY.to_string(), b"{}".to_vec());
        let err = find(&meta).err().unwrap().to_string();
        assert!(err.contains("signature.json is missing"), "{err}");

        let mut st = Statement::new("a", Digest::of(b""), &files(), None);
        st.format = "cove-signed-build/9".to_string();
        let err = parse_statement(&st.to_bytes()).unwrap_err().to_string();
        assert!(err.contains("cove-signed-build/9"), "{err}");

        let env = br#"{"algorithm":"rsa","public_key":"","signature":""}"#;
        let err = parse_envelope(env).unwrap_err().to_string();
        assert!(err.contains("ed25519 only"), "{err}");
    }
}
