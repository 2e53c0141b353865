//! `cove types [DIR]` (and the last step of `cove new`): the editor types
//! generated from the API catalog (cove_caps::api::render) written into the
//! app's `.cove/types/`, and the editor configuration that points at them
//! when the app has none: `.luarc.json` (LuaLS) for a Lua app,
//! `jsconfig.json` for a JavaScript one (a TypeScript app's tsconfig.json
//! comes with `cove new`). An existing configuration is never overwritten.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use cove_caps::api::render;

/// Where the types go, inside the app directory (`cove build` leaves out
/// dot-directories, so they are never packed).
pub const TYPES_DIR: &str = ".cove/types";

const LUARC: &str = r#"{
  "$schema": "https://raw.githubusercontent.com/LuaLS/vscode-lua/master/setting/schema.json",
  "runtime.version": "Lua 5.4",
  "workspace.library": [".cove/types/lua"],
  "workspace.checkThirdParty": false
}
"#;

const JSCONFIG: &str = r#"{
  "compilerOptions": {
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "target": "ES2020",
    "checkJs": true,
    "noEmit": true,
    "types": []
  },
  "include": ["**/*.js", ".cove/types/*.d.ts"],
  "exclude": [".cove/types/lua"]
}
"#;

/// Which editor configuration an app gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Editor {
    Lua,
    Js,
    /// tsconfig.json is the scaffold's: only the types are written.
    Ts,
}

impl Editor {
    /// The app's language, from its entry file.
    pub fn of_dir(dir: &Path) -> Editor {
        if dir.join("app.ts").is_file() {
            Editor::Ts
        } else if dir.join("app.js").is_file() {
            Editor::Js
        } else {
            Editor::Lua
        }
    }
}

/// Write the types (always, so they match this Cove) and the editor
/// configuration (only when missing); returns the paths written, relative
/// to `dir`.
pub fn write(dir: &Path, editor: Editor) -> Result<Vec<String>> {
    let mut written = Vec::new();
    for f in render::editor_types() {
        let rel = f.path.strip_prefix("types/").unwrap_or(&f.path);
        let rel = format!("{TYPES_DIR}/{rel}");
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        fs::write(&path, f.text).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(rel);
    }
    let config = match editor {
        Editor::Lua => Some((".luarc.json", LUARC)),
        Editor::Js => Some(("jsconfig.json", JSCONFIG)),
        Editor::Ts => None,
    };
    if let Some((name, text)) = config {
        let path = dir.join(name);
        if !path.exists() {
            fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
            written.push(name.to_string());
        }
    }
    Ok(written)
}

/// `cove types [DIR]`.
pub fn run(dir: Option<&Path>) -> Result<i32> {
    let dir = dir.unwrap_or(Path::new("."));
    if !dir.is_dir() {
        eprintln!("cove types: {} is not a directory", dir.display());
        return Ok(1);
    }
    let editor = Editor::of_dir(dir);
    let written = write(dir, editor)?;
    let configs: Vec<&String> = written
        .iter()
        .filter(|p| !p.starts_with(TYPES_DIR))
        .collect();
    println!(
        "wrote {} type files to {}{}",
        written.len() - configs.len(),
        dir.join(TYPES_DIR).display(),
        if configs.is_empty() {
            String::new()
        } else {
            format!(
                " and {}",
                configs
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_are_json() {
        for text in [LUARC, JSCONFIG] {
            serde_json::from_str::<serde_json::Value>(text).expect("valid JSON");
        }
    }

    #[test]
    fn types_and_config_are_written_and_a_config_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("app.lua"), "").unwrap();
        fs::write(dir.path().join(".luarc.json"), "{}").unwrap();
        let written = write(dir.path(), Editor::of_dir(dir.path())).unwrap();
        assert!(
            written.contains(&".cove/types/hull.d.ts".to_string()),
            "{written:?}"
        );
        assert!(dir.path().join(".cove/types/lua/globals.lua").is_file());
        assert!(dir.path().join(".cove/types/lua/hull/kv.lua").is_file());
        assert_eq!(
            fs::read_to_string(dir.path().join(".luarc.json")).unwrap(),
            "{}"
        );
    }
}
