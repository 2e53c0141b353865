//! The generated API files (docs/api/, types/) are what the catalog makes
//! today. Stale copies fail here; `COVE_BLESS=1 cargo test -p cove-caps
//! --test generated` rewrites them (and removes files no module makes).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cove_caps::api::render;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Files under these directories are all generated.
const DIRS: &[&str] = &["docs/api", "types"];

fn on_disk() -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for dir in DIRS {
        let mut stack = vec![root().join(dir)];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if let Ok(rel) = path.strip_prefix(root()) {
                    found.insert(rel.to_string_lossy().into_owned());
                }
            }
        }
    }
    found
}

#[test]
fn generated_api_files_are_current() {
    let files = render::committed();
    let bless = std::env::var_os("COVE_BLESS").is_some();
    let mut stale = Vec::new();
    for f in &files {
        let path = root().join(&f.path);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(f.text.as_str()) {
            if bless {
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                std::fs::write(&path, &f.text).expect("write");
            } else {
                stale.push(f.path.clone());
            }
        }
    }
    let made: BTreeSet<String> = files.iter().map(|f| f.path.clone()).collect();
    for extra in on_disk().difference(&made) {
        if bless {
            std::fs::remove_file(root().join(extra)).expect("remove");
        } else {
            stale.push(format!("{extra} (no module makes it)"));
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files; run `COVE_BLESS=1 cargo test -p cove-caps --test generated`:\n  {}",
        stale.join("\n  ")
    );
}
