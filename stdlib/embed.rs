// Shared by the build scripts of cove-lua and cove-js (`include!`d): lists the
// stdlib sources of one language so they are embedded with `include_str!`
// and no module name is written out by hand.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Write `$OUT_DIR/stdlib.rs`: `const STDLIB: &[(&str, &str)]` of
/// (module name, source) for every `*.{ext}` under `stdlib/{lang}/`.
/// Names join the path parts with `sep` after `prefix`
/// (`hull/middleware/cors.lua` → `hull.middleware.cors`,
/// `middleware/cors.js` → `hull:middleware:cors`).
fn embed_stdlib(lang: &str, ext: &str, prefix: &str, sep: &str) {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets this"));
    let root = manifest.join("../../stdlib").join(lang);
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let mut out = String::from("pub(crate) const STDLIB: &[(&str, &str)] = &[\n");
    for path in files {
        let rel = path.strip_prefix(&root).expect("under root");
        let Some(stem) = rel.to_str().and_then(|s| s.strip_suffix(ext)) else {
            continue;
        };
        let name = format!("{prefix}{}", stem.replace('/', sep));
        let abs = path.canonicalize().expect("stdlib file");
        writeln!(out, "    ({name:?}, include_str!({:?})),", abs.display().to_string())
            .expect("string write");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets this")).join("stdlib.rs");
    std::fs::write(dest, out).expect("write stdlib.rs");
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}
