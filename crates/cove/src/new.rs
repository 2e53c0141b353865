//! `cove new <name> [--runtime lua|js|ts]`: scaffold an app whose tests pass
//! out of the box (Hull §1.1; Hull's JavaScript scaffold does not even load,
//! so all of ours are run by the integration tests). The files are templates
//! in `scaffold/`, where `{{name}}` and friends are filled in.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::cli::{NewArgs, NewRuntime};

/// `(path inside the app, template)` of the files every app gets.
const COMMON: [(&str, &str); 3] = [
    (
        "migrations/001_init.sql",
        include_str!("scaffold/001_init.sql"),
    ),
    (".gitignore", include_str!("scaffold/gitignore")),
    ("README.md", include_str!("scaffold/README.md")),
];

/// The runtime's own files: the entry and its test (and for TypeScript,
/// the tsconfig.json `tsc` checks the app with).
fn runtime_files(runtime: NewRuntime) -> &'static [(&'static str, &'static str)] {
    match runtime {
        NewRuntime::Lua => &[
            ("app.lua", include_str!("scaffold/lua/app.lua")),
            (
                "tests/test_app.lua",
                include_str!("scaffold/lua/tests/test_app.lua"),
            ),
        ],
        NewRuntime::Js => &[
            ("app.js", include_str!("scaffold/js/app.js")),
            (
                "tests/test_app.js",
                include_str!("scaffold/js/tests/test_app.js"),
            ),
        ],
        NewRuntime::Ts => &[
            ("app.ts", include_str!("scaffold/ts/app.ts")),
            (
                "tests/test_app.ts",
                include_str!("scaffold/ts/tests/test_app.ts"),
            ),
            ("tsconfig.json", include_str!("scaffold/ts/tsconfig.json")),
        ],
    }
}

pub fn run(args: &NewArgs) -> Result<i32> {
    match scaffold(&args.name, args.runtime) {
        Ok(()) => Ok(0),
        Err(e) => {
            eprintln!("cove new: {e:#}");
            Ok(1)
        }
    }
}

/// The app's name (the last part of the path) if it can name a directory
/// and the executable `cove build` writes, and go into `.gitignore` and
/// string literals of the templates unescaped.
fn app_name(path: &Path) -> Result<String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let ok = !name.is_empty()
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !ok {
        bail!(
            "invalid app name {:?}: use letters, digits, '_', '-' and '.' (not first); \
             it names the directory and the executable `cove build` writes",
            path.display().to_string()
        );
    }
    Ok(name.to_string())
}

fn language(runtime: NewRuntime) -> &'static str {
    match runtime {
        NewRuntime::Lua => "Lua",
        NewRuntime::Js => "JavaScript",
        NewRuntime::Ts => "TypeScript",
    }
}

/// File extension of the app's sources.
fn ext(runtime: NewRuntime) -> &'static str {
    match runtime {
        NewRuntime::Lua => "lua",
        NewRuntime::Js => "js",
        NewRuntime::Ts => "ts",
    }
}

/// The README's line for type checking (TypeScript only; Cove strips the
/// types without checking them).
fn check_line(runtime: NewRuntime) -> &'static str {
    match runtime {
        NewRuntime::Ts => {
            "npx -p typescript tsc -p . # check the types (Cove only strips them; see tsconfig.json)\n"
        }
        NewRuntime::Lua | NewRuntime::Js => "",
    }
}

fn fill(template: &str, name: &str, runtime: NewRuntime) -> String {
    template
        .replace("{{name}}", name)
        .replace("{{language}}", language(runtime))
        .replace("{{ext}}", ext(runtime))
        .replace("{{check}}\n", check_line(runtime))
}

fn scaffold(path: &Path, runtime: NewRuntime) -> Result<()> {
    let name = app_name(path)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    // create_dir (not _all) fails if the directory exists, even if another
    // process made it a moment ago: an existing app is never written into.
    match fs::create_dir(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => bail!(
            "{} already exists; choose another name or remove it first",
            path.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
    }
    let files: Vec<(&str, &str)> = runtime_files(runtime)
        .iter()
        .copied()
        .chain(COMMON)
        .collect();
    let editor = match runtime {
        NewRuntime::Lua => crate::editor_types::Editor::Lua,
        NewRuntime::Js => crate::editor_types::Editor::Js,
        NewRuntime::Ts => crate::editor_types::Editor::Ts,
    };
    let written = write_all(path, &files, &name, runtime)
        .and_then(|()| crate::editor_types::write(path, editor).map(drop));
    if let Err(e) = written {
        // Leave nothing half made behind: the directory is ours, just created.
        let _ = fs::remove_dir_all(path);
        return Err(e);
    }
    print_done(path, &files, runtime);
    Ok(())
}

fn write_all(root: &Path, files: &[(&str, &str)], name: &str, runtime: NewRuntime) -> Result<()> {
    for (rel, template) in files {
        let dest: PathBuf = root.join(rel);
        if let Some(dir) = dest.parent() {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        fs::write(&dest, fill(template, name, runtime))
            .with_context(|| format!("cannot write {}", dest.display()))?;
    }
    Ok(())
}

fn print_done(path: &Path, files: &[(&str, &str)], runtime: NewRuntime) {
    let shown = path.display();
    println!("cove new: created {shown}, a {} app", language(runtime));
    for (rel, _) in files {
        println!("  {}", path.join(rel).display());
    }
    println!(
        "  {} (editor types: docs/editors.md; `cove types` refreshes them)",
        path.join(crate::editor_types::TYPES_DIR).display()
    );
    println!("\nNext steps:\n  cd {shown} && cove test && cove dev");
    println!("then open http://127.0.0.1:3000/health; edits reload as you save.");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(app_name(Path::new("blog")).unwrap(), "blog");
        assert_eq!(app_name(Path::new("apps/my-app.v2")).unwrap(), "my-app.v2");
        for bad in ["", ".", "..", "a b", ".hidden", "-x", "x/", "é", "a*b"] {
            // `x/` has the file name `x`, which is fine.
            if bad == "x/" {
                continue;
            }
            assert!(app_name(Path::new(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn templates_are_filled() {
        for rt in [NewRuntime::Lua, NewRuntime::Js, NewRuntime::Ts] {
            for (rel, t) in runtime_files(rt).iter().copied().chain(COMMON) {
                let out = fill(t, "blog", rt);
                assert!(!out.contains("{{"), "{rel} has an unfilled placeholder");
            }
        }
        assert!(fill(COMMON[1].1, "blog", NewRuntime::Lua).contains("/blog\n"));
        let readme = COMMON[2].1;
        assert!(!fill(readme, "blog", NewRuntime::Js).contains("tsc"));
        assert!(fill(readme, "blog", NewRuntime::Ts).contains("\nnpx -p typescript tsc -p . #"));
    }

    #[test]
    fn the_tsconfig_is_json_for_strip_only_typescript() {
        let (_, t) = runtime_files(NewRuntime::Ts)
            .iter()
            .find(|(rel, _)| *rel == "tsconfig.json")
            .expect("tsconfig.json");
        let v: serde_json::Value = serde_json::from_str(t).expect("valid JSON");
        let o = &v["compilerOptions"];
        assert_eq!(o["noEmit"], true);
        assert_eq!(o["strict"], true);
        assert_eq!(o["allowImportingTsExtensions"], true);
        assert_eq!(o["erasableSyntaxOnly"], true);
        assert_eq!(o["types"], serde_json::json!([]));
        assert_eq!(
            v["include"],
            serde_json::json!(["**/*.ts", ".cove/types/*.d.ts"])
        );
    }
}
