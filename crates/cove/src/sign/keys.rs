//! Key files and `cove keygen`. The formats are Hull's: NAME.pub holds the
//! Ed25519 public key as 64 lowercase hex digits and a newline; NAME.key
//! the 64-byte NaCl secret key (the 32-byte seed, then the public key) as
//! 128 hex digits and a newline, written with mode 600 — the same text
//! `crypto.ed25519_keypair()` returns to apps.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use ed25519_dalek::{SigningKey, VerifyingKey};

use crate::cli::KeygenArgs;

/// NAME.key and NAME.pub for NAME (a trailing `.key` or `.pub` is dropped,
/// so `cove keygen release.key` writes release.key, not release.key.key).
pub fn key_paths(name: &Path) -> (PathBuf, PathBuf) {
    let stem = match name.extension().and_then(|e| e.to_str()) {
        Some("key" | "pub") => name.with_extension(""),
        _ => name.to_path_buf(),
    };
    let with = |ext: &str| {
        let mut s = stem.clone().into_os_string();
        s.push(ext);
        PathBuf::from(s)
    };
    (with(".key"), with(".pub"))
}

/// A short name for a public key: the first 16 hex digits of its SHA-256.
/// For telling keys apart at a glance; checks compare whole keys.
pub fn fingerprint(key: &VerifyingKey) -> String {
    super::sha256_hex(key.as_bytes())[..16].to_string()
}

/// `cove keygen [NAME]`: a new key pair, never over existing files.
pub fn keygen(args: &KeygenArgs) -> Result<i32> {
    let (secret_path, public_path) = key_paths(&args.name);
    if let Some(dir) = secret_path
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        bail!(
            "directory {} does not exist; create it first (mode 700 suits a directory of keys)",
            dir.display()
        );
    }
    for path in [&secret_path, &public_path] {
        if path.exists() {
            bail!(
                "{} already exists; cove keygen never overwrites a key (builds signed with it \
                 could no longer be matched to it): choose another NAME or move the old files away",
                path.display()
            );
        }
    }
    let mut seed = [0u8; 32];
    getrandom::getrandom(&mut seed)
        .map_err(|e| anyhow!("the operating system's random generator failed: {e}"))?;
    let key = SigningKey::from_bytes(&seed);
    let secret = format!("{}\n", hex::encode(key.to_keypair_bytes()));
    let public = format!("{}\n", hex::encode(key.verifying_key().as_bytes()));

    write_new(&secret_path, &secret, 0o600)?;
    if let Err(e) = write_new(&public_path, &public, 0o644) {
        // Half a pair is no use: leave nothing behind.
        let _ = std::fs::remove_file(&secret_path);
        return Err(e);
    }
    println!(
        "wrote {} (public key: give it to whoever starts the app, for --verify-sig)",
        public_path.display()
    );
    println!(
        "wrote {} (secret key, mode 600: keep it safe; sign with `cove build --sign {}`)",
        secret_path.display(),
        secret_path.display()
    );
    println!("key fingerprint {}", fingerprint(&key.verifying_key()));
    Ok(0)
}

/// Create `path` (it must not exist) holding `text`, with `mode` on Unix.
fn write_new(path: &Path, text: &str, mode: u32) -> Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The hex digits of a key file, or an error saying how to make one.
fn read_hex(path: &Path, flag: &str) -> Result<Vec<u8>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        anyhow!(
            "{flag} {}: cannot read it ({e}); create a key pair with `cove keygen NAME`",
            path.display()
        )
    })?;
    let digits = text.trim();
    hex::decode(digits).map_err(|_| {
        anyhow!(
            "{flag} {}: not a key file written by cove keygen (expected hex digits only)",
            path.display()
        )
    })
}

/// The secret key of a NAME.key file, for `--sign`. Warns when others may
/// read the file.
pub fn read_secret(path: &Path) -> Result<SigningKey> {
    let bytes = read_hex(path, "--sign")?;
    let pair: [u8; 64] = match bytes.len() {
        64 => bytes.try_into().map_err(|_| anyhow!("64 bytes"))?,
        32 => bail!(
            "--sign {}: this is a public key (64 hex digits); --sign takes the secret key \
             file, NAME.key (128 hex digits)",
            path.display()
        ),
        n => bail!(
            "--sign {}: a secret key file holds 128 hex digits, this one {}",
            path.display(),
            n * 2
        ),
    };
    let key = SigningKey::from_keypair_bytes(&pair).map_err(|_| {
        anyhow!(
            "--sign {}: damaged: its last 64 hex digits are not the public key of its first 64",
            path.display()
        )
    })?;
    warn_if_readable(path);
    Ok(key)
}

#[cfg(unix)]
fn warn_if_readable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            eprintln!(
                "warning: {} can be read by other users (mode {mode:o}); `chmod 600 {}`",
                path.display(),
                path.display()
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_readable(_path: &Path) {}

/// The public key of a NAME.pub file; `flag` names the option it came from.
pub fn read_public(path: &Path, flag: &str) -> Result<VerifyingKey> {
    let bytes = read_hex(path, flag)?;
    let key: [u8; 32] = match bytes.len() {
        32 => bytes.try_into().map_err(|_| anyhow!("32 bytes"))?,
        64 => bail!(
            "{flag} {}: this is a secret key; {flag} takes the public key file, NAME.pub \
             (keep NAME.key off the machines that only run the app)",
            path.display()
        ),
        n => bail!(
            "{flag} {}: a public key file holds 64 hex digits, this one {}",
            path.display(),
            n * 2
        ),
    };
    VerifyingKey::from_bytes(&key)
        .map_err(|_| anyhow!("{flag} {}: not a valid Ed25519 public key", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_drop_a_given_extension() {
        let want = (PathBuf::from("k/rel.key"), PathBuf::from("k/rel.pub"));
        assert_eq!(key_paths(Path::new("k/rel")), want);
        assert_eq!(key_paths(Path::new("k/rel.key")), want);
        assert_eq!(key_paths(Path::new("k/rel.pub")), want);
        assert_eq!(
            key_paths(Path::new("v1.2")).0,
            PathBuf::from("v1.2.key"),
            "other extensions stay part of the name"
        );
    }

    #[test]
    fn keys_read_back_and_mixups_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let name = dir.path().join("dev");
        keygen(&KeygenArgs { name: name.clone() }).unwrap();
        let (sk_path, pk_path) = key_paths(&name);
        let sk = read_secret(&sk_path).unwrap();
        let pk = read_public(&pk_path, "--verify-sig").unwrap();
        assert_eq!(sk.verifying_key(), pk);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&sk_path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }

        let err = format!("{:#}", read_secret(&pk_path).unwrap_err());
        assert!(err.contains("this is a public key"), "{err}");
        let err = format!("{:#}", read_public(&sk_path, "--verify-sig").unwrap_err());
        assert!(err.contains("this is a secret key"), "{err}");

        // A pair whose halves do not belong together.
        let other = SigningKey::from_bytes(&[9; 32]);
        let mut pair = sk.to_keypair_bytes();
        pair[32..].copy_from_slice(other.verifying_key().as_bytes());
        std::fs::write(&sk_path, hex::encode(pair)).unwrap();
        let err = format!("{:#}", read_secret(&sk_path).unwrap_err());
        assert!(err.contains("damaged"), "{err}");

        let err = format!("{:#}", keygen(&KeygenArgs { name }).unwrap_err());
        assert!(err.contains("already exists"), "{err}");

        let name = dir.path().join("missing/dev");
        let err = format!("{:#}", keygen(&KeygenArgs { name }).unwrap_err());
        assert!(
            err.contains("missing does not exist; create it first"),
            "{err}"
        );
    }

    #[test]
    fn fingerprints_are_16_hex_digits_of_the_keys_hash() {
        let key = SigningKey::from_bytes(&[1; 32]).verifying_key();
        let fp = fingerprint(&key);
        assert_eq!(fp.len(), 16);
        assert!(super::super::sha256_hex(key.as_bytes()).starts_with(&fp));
    }
}
