//! `cove inspect FILE`: what a built executable holds, who signed it and
//! whether every part is as signed; text for people, `--json` for scripts.
//! Exit 1 when a part does not match (or, with `--key`, when the file is
//! unsigned or signed by another key): the same verdict `--verify-sig`
//! reaches, without starting the app.

use std::fmt::Write as _;
use std::fs::File;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use serde_json::{json, Value};

use super::check::{examine, Examination, Problem};
use super::keys::{fingerprint, read_public};
use super::statement::file_digests;
use crate::build::{count, human};
use crate::cli::InspectArgs;
use crate::pack::{self, Built, FORMAT_VERSION};

pub fn inspect(args: &InspectArgs) -> Result<i32> {
    let result = examined(args);
    if args.json {
        let (out, code) = match result {
            Ok((built, mut ex)) => {
                let code = exit_code(&ex);
                (as_json(&args.file, &built, &mut ex), code)
            }
            Err(e) => (json!({ "error": format!("{e:#}") }), 1),
        };
        println!("{out}");
        return Ok(code);
    }
    let (built, ex) = result?;
    print!("{}", as_text(&args.file, &built, &ex));
    Ok(exit_code(&ex))
}

fn exit_code(ex: &Examination) -> i32 {
    i32::from(!ex.problems.is_empty())
}

/// Read and check the file; with `--key`, an unsigned file is a problem.
fn examined(args: &InspectArgs) -> Result<(Built, Examination)> {
    let path = &args.file;
    if path.is_dir() {
        bail!(
            "{} is a directory; cove inspect reads an executable written by cove build \
             (`cove build --list {}` shows what a build of it would pack)",
            path.display(),
            path.display()
        );
    }
    let expected = args
        .key
        .as_deref()
        .map(|k| read_public(k, "--key"))
        .transpose()?;
    let built = pack::read_built(path)?.ok_or_else(|| {
        anyhow!(
            "{} is not an executable written by cove build (it carries no app)",
            path.display()
        )
    })?;
    let mut file = File::open(path)?;
    let mut ex = examine(&built, &mut file, expected.as_ref())?;
    if ex.signed.is_none() {
        if let Some(key) = &args.key {
            ex.problems.push(Problem {
                part: "unsigned",
                path: None,
                message: format!(
                    "it is not signed, so it is not signed by --key {}",
                    key.display()
                ),
            });
        }
    }
    Ok((built, ex))
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

fn as_text(path: &Path, built: &Built, ex: &Examination) -> String {
    let files = &built.pack.files;
    let total: u64 = files.values().map(|b| b.len() as u64).sum();
    let mut out = format!(
        "{}: built by cove build into {} ({}, format v{FORMAT_VERSION})\n",
        built.pack.name,
        path.display(),
        human(file_size(path))
    );
    let mut row = |label: &str, text: &str| {
        let _ = writeln!(out, "  {label:<11}{text}");
    };
    row(
        "cove part",
        &format!(
            "{}, sha256 {}",
            human(ex.binary.size),
            &ex.binary.sha256[..16]
        ),
    );
    row(
        "app files",
        &format!("{}, {}", count(files.len()), human(total)),
    );
    match &ex.signed {
        None => {
            row("signed", "no (`cove build --sign NAME.key` signs a build)");
        }
        Some(signed) => {
            let by = match &signed.key {
                Some(k) => format!(
                    "yes, by key {} (public key {})",
                    fingerprint(k),
                    hex::encode(k.as_bytes())
                ),
                None => "yes, but the signature cannot be read".to_string(),
            };
            row("signed", &by);
            if let Some(st) = &signed.statement {
                let manifest = st
                    .manifest
                    .as_ref()
                    .map_or_else(|| "none declared".to_string(), Value::to_string);
                row(
                    "manifest",
                    &format!("{manifest} (checked as the app loads under --verify-sig)"),
                );
                row("built with", &format!("cove {}", st.cove_version));
            }
        }
    }
    if ex.problems.is_empty() {
        let verdict = if ex.signed.is_some() {
            "OK: the Cove binary, the app name and every file are as signed"
        } else {
            "not checked: nothing is signed"
        };
        row("integrity", verdict);
    } else {
        let n = ex.problems.len();
        row(
            "integrity",
            &format!(
                "FAILED, {n} problem{}; --verify-sig would refuse to start it:",
                if n == 1 { "" } else { "s" }
            ),
        );
        for p in &ex.problems {
            row("", &format!("- {}", p.message));
        }
    }
    for (path, bytes) in files {
        let _ = writeln!(out, "{:>10}  {path}", bytes.len());
    }
    out
}

fn as_json(path: &Path, built: &Built, ex: &mut Examination) -> Value {
    let signature = ex.signed.as_ref().map(|s| {
        let st = s.statement.as_ref();
        json!({
            "algorithm": "ed25519",
            "public_key": s.key.map(|k| hex::encode(k.as_bytes())),
            "fingerprint": s.key.as_ref().map(fingerprint),
            "cove_version": st.map(|st| st.cove_version.clone()),
            "manifest": st.and_then(|st| st.manifest.clone()),
        })
    });
    json!({
        "file": path.display().to_string(),
        "app": built.pack.name,
        "format": FORMAT_VERSION,
        "size": file_size(path),
        "binary": ex.binary,
        "files": file_digests(&built.pack.files),
        "signed": ex.signed.is_some(),
        "signature": signature,
        "ok": ex.problems.is_empty(),
        "problems": std::mem::take(&mut ex.problems),
    })
}
