//! `cove new <name> [--runtime lua|js]`: scaffold an app whose tests pass out
//! of the box (Hull §1.1; Hull's JavaScript scaffold does not even load, so
//! both of ours are run by the integration tests). The files are templates
//! in `scaffold/`, where `{{name}}` and friends are filled in.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::app::Runtime;
use crate::cli::NewArgs;

/// `(path inside the app, template)` of the files every app gets.
const COMMON: [(&str, &str); 3] = [
    (
        "migrations/001_init.sql",
        include_str!("scaffold/001_init.sql"),
    ),
    (".gitignore", include_str!("scaffold/gitignore")),
    ("README.md", include_str!("scaffold/README.md")),
];

/// The runtime's own files: the entry and its test.
fn runtime_files(runtime: Runtime) -> [(&'static str, &'static str); 2] {
    match runtime {
        Runtime::Lua => [
            ("app.lua", include_str!("scaffold/lua/app.lua")),
            (
                "tests/test_app.lua",
                include_str!("scaffold/lua/tests/test_app.lua"),
            ),
        ],
        Runtime::Js => [
            ("app.js", include_str!("scaffold/js/app.js")),
            (
                "tests/test_app.js",
                include_str!("scaffold/js/tests/test_app.js"),
            ),
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

fn language(runtime: Runtime) -> &'static str {
    match runtime {
        Runtime::Lua => "Lua",
        Runtime::Js => "JavaScript",
    }
}

fn fill(template: &str, name: &str, runtime: Runtime) -> String {
    template
        .replace("{{name}}", name)
        .replace("{{language}}", language(runtime))
        .replace("{{ext}}", runtime.ext())
}

fn scaffold(path: &Path, runtime: Runtime) -> Result<()> {
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
    let files: Vec<(&str, &str)> = runtime_files(runtime).into_iter().chain(COMMON).collect();
    let written = write_all(path, &files, &name, runtime);
    if let Err(e) = written {
        // Leave nothing half made behind: the directory is ours, just created.
        let _ = fs::remove_dir_all(path);
        return Err(e);
    }
    print_done(path, &files, runtime);
    Ok(())
}

fn write_all(root: &Path, files: &[(&str, &str)], name: &str, runtime: Runtime) -> Result<()> {
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

fn print_done(path: &Path, files: &[(&str, &str)], runtime: Runtime) {
    let shown = path.display();
    println!("cove new: created {shown}, a {} app", language(runtime));
    for (rel, _) in files {
        println!("  {}", path.join(rel).display());
    }
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
        for rt in [Runtime::Lua, Runtime::Js] {
            for (rel, t) in runtime_files(rt).into_iter().chain(COMMON) {
                let out = fill(t, "blog", rt);
                assert!(!out.contains("{{"), "{rel} has an unfilled placeholder");
            }
        }
        assert!(fill(COMMON[1].1, "blog", Runtime::Lua).contains("/blog\n"));
    }
}
