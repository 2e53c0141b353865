//! docs/architecture.md's layer picture is the dependency order of the
//! Cargo manifests: each crate sits one layer above the highest layer it
//! depends on, and every workspace crate is drawn.

use std::collections::BTreeMap;
use std::path::Path;

/// Crates outside the picture: test services and the benchmark harness.
const TOOLS: &[&str] = &["cove-testsvc", "cove-bench"];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Each workspace crate's normal (not dev, not build) dependencies on
/// other workspace crates.
fn manifests() -> BTreeMap<String, Vec<String>> {
    let mut deps = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("crates")).expect("crates/") {
        let manifest = entry.expect("entry").path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let doc: toml::Table = toml::from_str(&text).expect("Cargo.toml parses");
        let name = doc["package"]["name"].as_str().expect("name").to_string();
        let own = doc
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|t| {
                t.keys()
                    .filter(|k| k.starts_with("cove"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        deps.insert(name, own);
    }
    deps
}

/// Layer 0 depends on no workspace crate; others one above their highest.
fn level(name: &str, deps: &BTreeMap<String, Vec<String>>) -> usize {
    deps[name]
        .iter()
        .map(|d| level(d, deps) + 1)
        .max()
        .unwrap_or(0)
}

/// The crates drawn in each layer of the picture, bottom layer first.
fn picture() -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).expect("doc");
    let block = doc
        .split("```")
        .nth(1)
        .expect("the picture is the first code block");
    let mut layers: Vec<Vec<String>> = vec![Vec::new()];
    for line in block.lines() {
        if line.trim_start().starts_with('─') {
            layers.push(Vec::new());
            continue;
        }
        for part in line.split('│') {
            let word = part.split_whitespace().next().unwrap_or("");
            if word == "cove" || word.starts_with("cove-") {
                layers.last_mut().expect("layer").push(word.to_string());
            }
        }
    }
    layers.retain(|l| !l.is_empty());
    layers.reverse();
    layers
}

#[test]
fn the_layer_picture_matches_the_cargo_manifests() {
    let deps = manifests();
    let layers = picture();
    let drawn: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |c| (c.as_str(), i)))
        .collect();
    for name in deps.keys().filter(|n| !TOOLS.contains(&n.as_str())) {
        let want = level(name, &deps);
        assert_eq!(
            drawn.get(name.as_str()).copied(),
            Some(want),
            "{name} depends on {:?}: it belongs in layer {want} from the bottom of docs/architecture.md's picture ({layers:?})",
            deps[name]
        );
    }
    for name in drawn.keys() {
        assert!(
            deps.contains_key(*name),
            "the picture draws {name}, which is not a crate"
        );
    }
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files of the "Where `unsafe` lives" table, as listed.
fn listed_unsafe_files() -> std::collections::BTreeSet<String> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).expect("doc");
    let table = doc
        .split("<!-- unsafe-files")
        .nth(1)
        .expect("the unsafe-files table");
    table
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('`').nth(1))
        .filter(|f| f.starts_with("crates/"))
        .map(str::to_string)
        .collect()
}

#[test]
fn unsafe_lives_only_in_the_listed_files() {
    let mut files = Vec::new();
    for dir in ["crates", "bench"] {
        rust_files(&root().join(dir), &mut files);
    }
    let allowing: std::collections::BTreeSet<String> = files
        .iter()
        // Shipped code: each crate's src/ (integration tests may poke).
        .filter(|f| f.components().any(|c| c.as_os_str() == "src"))
        .filter(|f| !f.components().any(|c| c.as_os_str() == "target"))
        .filter(|f| {
            std::fs::read_to_string(f)
                .expect("read")
                .contains("allow(unsafe_code)")
        })
        .map(|f| {
            f.strip_prefix(root())
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let listed = listed_unsafe_files();
    let unlisted: Vec<_> = allowing.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&allowing).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "docs/architecture.md \"Where `unsafe` lives\" is out of date:\n  \
         allow unsafe_code but are not listed: {unlisted:?}\n  \
         listed but allow no unsafe_code: {stale:?}"
    );
}

/// Files both binding crates have under the same name, for the same job.
const MIRRORED: &[&str] = &[
    "bind", "caps", "db", "engine", "error", "globals", "json", "modules", "raw", "req",
    "template", "testing", "vm", "ws",
];

#[test]
fn the_bindings_mirror_their_file_names() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).expect("doc");
    for name in MIRRORED {
        for krate in ["cove-lua", "cove-js"] {
            let src = root().join(format!("crates/{krate}/src"));
            let file = src.join(format!("{name}.rs"));
            let dir = src.join(name).join("mod.rs");
            assert!(
                file.is_file() || dir.is_file(),
                "{krate} has no {name}.rs or {name}/"
            );
        }
        assert!(
            doc.contains(&format!("`{name}`")),
            "architecture.md names `{name}`"
        );
    }
}

/// In each binding crate, every module but `raw` is declared
/// `#[forbid(unsafe_code)]` in lib.rs (issue 39: the runtime's unsafe code
/// in one module, everything else forbidding it).
#[test]
fn the_bindings_forbid_unsafe_outside_raw() {
    for krate in ["cove-lua", "cove-js"] {
        let lib = std::fs::read_to_string(root().join(format!("crates/{krate}/src/lib.rs")))
            .expect("lib.rs");
        let mut attrs: Vec<&str> = Vec::new();
        let mut modules = 0;
        for line in lib.lines().map(str::trim) {
            if line.starts_with("#[") {
                attrs.push(line);
                continue;
            }
            if let Some(name) = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))
                .and_then(|rest| rest.strip_suffix(';'))
            {
                modules += 1;
                let forbids = attrs.contains(&"#[forbid(unsafe_code)]");
                assert!(
                    forbids || name == "raw",
                    "{krate}: `mod {name}` must be declared #[forbid(unsafe_code)] (unsafe code belongs in raw/)"
                );
                assert!(
                    !(forbids && name == "raw"),
                    "{krate}: raw is where unsafe code lives"
                );
            }
            attrs.clear();
        }
        assert!(modules > 5, "{krate}: lib.rs lists its modules");
        assert!(
            lib.contains("mod raw;"),
            "{krate}: the unsafe code lives in raw/"
        );
    }
}
