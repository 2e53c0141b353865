//! Finding an app: its files (a directory, or the pack built into this
//! executable), its entry file and the runtime that runs it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};

use cove_core::{AppFiles, Limits, Pack, ScriptConfig};

pub use crate::cli::Runtime;

/// Entry file names, in the order server mode prefers them (Hull: app.js
/// first). TypeScript runs on the JavaScript runtime, its types stripped.
pub const ENTRIES: [(&str, Runtime); 3] = [
    ("app.js", Runtime::Js),
    ("app.ts", Runtime::Js),
    ("app.lua", Runtime::Lua),
];

/// The entry files, as error messages list them.
pub const ENTRY_NAMES: &str = "app.js, app.ts or app.lua";

impl Runtime {
    /// The runtime an entry file needs: `.js` or `.ts` → JavaScript,
    /// anything else → Lua.
    pub fn of(entry: &str) -> Runtime {
        if entry.ends_with(".js") || entry.ends_with(".ts") {
            Runtime::Js
        } else {
            Runtime::Lua
        }
    }

    /// As shown in the startup line.
    pub fn label(self) -> &'static str {
        match self {
            Runtime::Lua => "Lua runtime",
            Runtime::Js => "JavaScript runtime",
        }
    }

    /// As printed in JSON (`cove routes`).
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Lua => "lua",
            Runtime::Js => "js",
        }
    }

    /// File extension of its sources.
    pub fn ext(self) -> &'static str {
        self.name()
    }
}

/// A located app.
#[derive(Debug, Clone)]
pub struct AppSource {
    pub files: AppFiles,
    /// Entry file, relative to `files`.
    pub entry: String,
    pub runtime: Runtime,
}

impl AppSource {
    /// The app directory on disk (`None` for a built-in pack).
    pub fn dir(&self) -> Option<&Path> {
        self.files.dir()
    }

    pub fn script_config(&self, limits: Limits, group_commit: bool) -> ScriptConfig {
        ScriptConfig {
            files: self.files.clone(),
            entry: self.entry.clone(),
            limits,
            group_commit,
        }
    }
}

/// The app a user named: an entry file, a directory holding `app.js`,
/// `app.ts` or `app.lua`, or (`None`) the current directory.
pub fn locate(app: Option<&Path>) -> Result<AppSource> {
    let dir = match app {
        Some(p) if p.is_file() => {
            let path = p
                .canonicalize()
                .with_context(|| format!("cannot open {}", p.display()))?;
            let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
            let entry = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| anyhow!("{}: not a file", p.display()))?;
            return Ok(AppSource {
                runtime: Runtime::of(&entry),
                files: AppFiles::Dir(dir),
                entry,
            });
        }
        Some(p) if p.is_dir() => p.to_path_buf(),
        Some(p) => bail!(
            "{}: no such file or directory{}",
            p.display(),
            command_hint(p)
        ),
        None => PathBuf::from("."),
    };
    let found = entries_in(&dir);
    match found.first() {
        Some(&(entry, runtime)) => Ok(AppSource {
            files: AppFiles::Dir(canonical_dir(&dir)?),
            entry: entry.to_string(),
            runtime,
        }),
        None => bail!(
            "no entry point found ({ENTRY_NAMES}) in {}; pass the app file, e.g. `cove app.lua`",
            dir.display()
        ),
    }
}

/// For a bare word that is no file (`cove tset`): the commands, and the
/// one it was probably meant to be.
fn command_hint(p: &Path) -> String {
    let word = p.to_string_lossy();
    if word.contains(['/', '.']) {
        return String::new();
    }
    let names = crate::cli::command_names();
    cove_core::hint(&word, names.iter().map(String::as_str), "cove's commands")
}

/// Which entry files a directory has, in [`ENTRIES`] order (app.js first).
pub fn entries_in(dir: &Path) -> Vec<(&'static str, Runtime)> {
    ENTRIES
        .iter()
        .filter(|(name, _)| dir.join(name).is_file())
        .copied()
        .collect()
}

pub fn canonical_dir(dir: &Path) -> Result<PathBuf> {
    dir.canonicalize()
        .with_context(|| format!("cannot open {}", dir.display()))
}

/// The app packed into a built executable, as served by it.
pub fn from_pack(pack: Pack) -> Result<AppSource> {
    let pack = Arc::new(pack);
    let files = AppFiles::Pack(pack.clone());
    let (entry, runtime) = ENTRIES
        .iter()
        .find(|(name, _)| files.is_file(name))
        .copied()
        .ok_or_else(|| anyhow!("the built-in app {} has no {ENTRY_NAMES}", pack.name))?;
    Ok(AppSource {
        files,
        entry: entry.to_string(),
        runtime,
    })
}
