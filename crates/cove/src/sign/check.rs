//! Checking a built file against its signature: each part (the `cove`
//! binary, the app's name, every packed file) compared with the signed
//! statement, so a refusal names what does not match. Used by
//! `--verify-sig` at start and by `cove inspect`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::Path;

use anyhow::{bail, Context, Result};
use ed25519_dalek::VerifyingKey;
use serde::Serialize;

use super::keys::{fingerprint, read_public};
use super::manifest::SignedManifest;
use super::statement::{self, Digest, FileDigest, Found, Statement};
use super::STATEMENT_ENTRY;
use crate::cli::ServeArgs;
use crate::pack::{self, Built};

/// One way a built file differs from its signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// `binary`, `file`, `name`, `key`, `signature` or `unsigned`.
    pub part: &'static str,
    /// The packed file concerned, for `file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub message: String,
}

impl Problem {
    fn new(part: &'static str, message: String) -> Problem {
        Problem {
            part,
            path: None,
            message,
        }
    }

    fn file(path: &str, message: String) -> Problem {
        Problem {
            part: "file",
            path: Some(path.to_string()),
            message: format!("{path}: {message}"),
        }
    }
}

/// The signature a built file carries, as far as it could be read.
#[derive(Debug)]
pub struct Signed {
    /// The key it names (`None`: the signature entry is damaged).
    pub key: Option<VerifyingKey>,
    /// The signed statement (`None`: missing or unreadable).
    pub statement: Option<Statement>,
}

/// What checking a built file found.
#[derive(Debug)]
pub struct Examination {
    /// The `cove` part as it is in the file.
    pub binary: Digest,
    /// `None`: the file is not signed.
    pub signed: Option<Signed>,
    pub problems: Vec<Problem>,
}

fn short(hex: &str) -> &str {
    &hex[..hex.len().min(16)]
}

/// Check `built`, read from `file`, against its signature; with `expected`,
/// also that this key made it. Hashes the `cove` part (every byte before
/// the archive) once; the files are those already read into `built`.
pub fn examine(
    built: &Built,
    file: &mut File,
    expected: Option<&VerifyingKey>,
) -> Result<Examination> {
    file.seek(SeekFrom::Start(0))?;
    let sha256 = super::sha256_prefix(file, built.span.start)
        .context("cannot read the executable's own bytes")?;
    let binary = Digest {
        size: built.span.start,
        sha256: hex::encode(sha256),
    };
    let mut problems = Vec::new();
    let (statement_bytes, envelope) = match statement::find(&built.meta) {
        Ok(Found::Unsigned) => {
            return Ok(Examination {
                binary,
                signed: None,
                problems,
            })
        }
        Ok(Found::Signed {
            statement,
            envelope,
        }) => (statement, envelope),
        Err(e) => {
            problems.push(Problem::new("signature", e.to_string()));
            let signed = Some(Signed {
                key: None,
                statement: None,
            });
            return Ok(Examination {
                binary,
                signed,
                problems,
            });
        }
    };

    let key = match statement::parse_envelope(envelope) {
        Ok((key, sig)) => {
            let differs = expected.is_some_and(|e| *e != key);
            if let (true, Some(want)) = (differs, expected) {
                problems.push(Problem::new(
                    "key",
                    format!(
                        "it is signed by key {}, not by the key given ({})",
                        fingerprint(&key),
                        fingerprint(want)
                    ),
                ));
            } else if !statement::signs(&key, &sig, statement_bytes) {
                problems.push(Problem::new(
                    "signature",
                    format!(
                        "the signature does not match {STATEMENT_ENTRY}: the statement was \
                         changed after signing"
                    ),
                ));
            }
            Some(key)
        }
        Err(e) => {
            problems.push(Problem::new("signature", e.to_string()));
            None
        }
    };
    let statement = match statement::parse_statement(statement_bytes) {
        Ok(st) => {
            compare(&st, built, &binary, &mut problems);
            Some(st)
        }
        Err(e) => {
            problems.push(Problem::new("signature", e.to_string()));
            None
        }
    };
    Ok(Examination {
        binary,
        signed: Some(Signed { key, statement }),
        problems,
    })
}

/// Every part of `built` that differs from `st`.
fn compare(st: &Statement, built: &Built, binary: &Digest, problems: &mut Vec<Problem>) {
    if st.app != built.pack.name {
        problems.push(Problem::new(
            "name",
            format!(
                "the app is named {:?}, the signed name is {:?}",
                built.pack.name, st.app
            ),
        ));
    }
    if st.binary != *binary {
        problems.push(Problem::new(
            "binary",
            format!(
                "the Cove binary part differs from the signed one ({} bytes, sha256 {}…; \
                 signed: {} bytes, sha256 {}…)",
                binary.size,
                short(&binary.sha256),
                st.binary.size,
                short(&st.binary.sha256)
            ),
        ));
    }
    let signed: BTreeMap<&str, &FileDigest> =
        st.files.iter().map(|f| (f.path.as_str(), f)).collect();
    for (path, bytes) in &built.pack.files {
        let here = Digest::of(bytes);
        match signed.get(path.as_str()) {
            None => problems.push(Problem::file(path, "packed but not signed".to_string())),
            Some(f) if f.size != here.size || f.sha256 != here.sha256 => {
                problems.push(Problem::file(
                    path,
                    format!(
                        "its contents differ from the signed ones ({} bytes, sha256 {}…; \
                         signed: {} bytes, sha256 {}…)",
                        here.size,
                        short(&here.sha256),
                        f.size,
                        short(&f.sha256)
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    for f in &st.files {
        if !built.pack.files.contains_key(&f.path) {
            problems.push(Problem::file(
                &f.path,
                "signed but missing from the file".to_string(),
            ));
        }
    }
}

/// A built executable whose signature `--verify-sig` accepted.
#[derive(Debug)]
pub struct Verified {
    /// The line to log once the server's log level is set.
    pub summary: String,
    /// What each worker's app must declare when it loads.
    pub manifest: SignedManifest,
}

/// `--verify-sig PUBKEY` for this executable (`built` read from it): the
/// signed manifest if the key signed it and every part is as signed, else
/// an error naming each part that is not.
pub fn verify_at_start(built: &Built, pubkey: &Path) -> Result<Verified> {
    let key = read_public(pubkey, "--verify-sig")?;
    let exe = pack::self_exe()?;
    let mut file =
        File::open(&exe).with_context(|| format!("cannot read {} to check it", exe.display()))?;
    let ex = examine(built, &mut file, Some(&key))?;
    let Some(signed) = ex.signed else {
        bail!(
            "refusing to start: this executable is not signed, so --verify-sig {} cannot vouch \
             for it; build it with `cove build --sign NAME.key`, or start it without --verify-sig \
             (and without COVE_VERIFY_SIG)",
            pubkey.display()
        );
    };
    if !ex.problems.is_empty() {
        let list: Vec<&str> = ex.problems.iter().map(|p| p.message.as_str()).collect();
        bail!(
            "refusing to start: this executable does not match its signature (--verify-sig {}): {}",
            pubkey.display(),
            list.join("; ")
        );
    }
    let statement = signed
        .statement
        .context("the signed statement is missing")?;
    Ok(Verified {
        summary: format!(
            "signature verified: key {}; the Cove binary, the app name and {} file(s) are as signed",
            fingerprint(&key),
            statement.files.len()
        ),
        manifest: SignedManifest::new(statement.manifest),
    })
}

/// Plain `cove` (and `cove dev`) given `--verify-sig`: an app directory
/// carries no signature, so serving it would vouch for nothing. Refuse,
/// saying how to get something that can be checked.
pub fn unbuilt(args: &ServeArgs) -> Result<()> {
    let Some(pubkey) = &args.verify_sig else {
        return Ok(());
    };
    let app = args
        .app
        .as_deref()
        .map_or_else(|| "the app".to_string(), |p| p.display().to_string());
    bail!(
        "refusing to start: --verify-sig {} checks an executable written by `cove build --sign`, \
         and {app} is served from its files, which carry no signature; build it \
         (`cove build --sign NAME.key`) and start the built file with --verify-sig, or drop \
         --verify-sig (and COVE_VERIFY_SIG) here",
        pubkey.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::write_exe_sealed;
    use ed25519_dalek::SigningKey;

    /// A sealed "executable" in `dir`, from a pretend cove of `base` bytes.
    fn sealed(dir: &Path, key: &SigningKey) -> std::path::PathBuf {
        let base = dir.join("cove");
        std::fs::write(&base, b"pretend cove").unwrap();
        let mut files = BTreeMap::new();
        files.insert("app.lua".to_string(), b"app.get('/', h)".to_vec());
        files.insert("static/a.css".to_string(), b"body{}".to_vec());
        let out = dir.join("demo");
        let seal = statement::seal_for(key, "demo", &files, None);
        write_exe_sealed(&base, &out, "demo", &files, Some(&seal)).unwrap();
        out
    }

    fn examine_path(path: &Path, expected: Option<&VerifyingKey>) -> Examination {
        let built = pack::read_built(path).unwrap().unwrap();
        examine(&built, &mut File::open(path).unwrap(), expected).unwrap()
    }

    /// Flip the case of byte `offset` of the first `needle` in the file.
    fn flip(path: &Path, needle: &[u8], offset: usize) {
        let mut bytes = std::fs::read(path).unwrap();
        let at = bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap();
        bytes[at + offset] ^= 0x20;
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn an_intact_build_has_no_problems() {
        let dir = tempfile::tempdir().unwrap();
        let key = SigningKey::from_bytes(&[5; 32]);
        let ex = examine_path(&sealed(dir.path(), &key), Some(&key.verifying_key()));
        assert_eq!(ex.problems, []);
        let signed = ex.signed.unwrap();
        assert_eq!(signed.key, Some(key.verifying_key()));
        assert_eq!(ex.binary.size, 12);
    }

    #[test]
    fn each_tampered_part_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let key = SigningKey::from_bytes(&[5; 32]);
        let path = sealed(dir.path(), &key);
        flip(&path, b"body{}", 0);
        flip(&path, b"pretend", 0);
        let ex = examine_path(&path, None);
        let parts: Vec<(&str, Option<&str>)> = ex
            .problems
            .iter()
            .map(|p| (p.part, p.path.as_deref()))
            .collect();
        assert_eq!(parts, [("binary", None), ("file", Some("static/a.css"))]);
    }

    #[test]
    fn another_key_is_refused_before_the_signature_is_tried() {
        let dir = tempfile::tempdir().unwrap();
        let key = SigningKey::from_bytes(&[5; 32]);
        let other = SigningKey::from_bytes(&[6; 32]).verifying_key();
        let ex = examine_path(&sealed(dir.path(), &key), Some(&other));
        assert_eq!(ex.problems.len(), 1, "{:?}", ex.problems);
        assert_eq!(ex.problems[0].part, "key");
        assert!(ex.problems[0]
            .message
            .contains(&fingerprint(&key.verifying_key())));
    }

    #[test]
    fn an_edited_statement_fails_the_signature() {
        let dir = tempfile::tempdir().unwrap();
        let key = SigningKey::from_bytes(&[5; 32]);
        let path = sealed(dir.path(), &key);
        // Rename the app inside the statement: same length, new meaning.
        flip(&path, b"\"app\": \"demo\"", 8);
        let ex = examine_path(&path, None);
        let parts: Vec<&str> = ex.problems.iter().map(|p| p.part).collect();
        assert_eq!(parts, ["signature", "name"], "{:?}", ex.problems);
    }

    #[test]
    fn an_unsigned_build_has_no_signature() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("cove");
        std::fs::write(&base, b"pretend cove").unwrap();
        let out = dir.path().join("demo");
        pack::write_exe(&base, &out, "demo", &BTreeMap::new()).unwrap();
        let ex = examine_path(&out, None);
        assert!(ex.signed.is_none());
        assert!(ex.problems.is_empty());
    }
}
